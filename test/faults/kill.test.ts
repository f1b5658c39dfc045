import { spawn } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Store } from '../../electron/host/storage/store'
import { readTranscript } from '../../electron/host/storage/transcripts'
import { removeDir, tempDir } from '../helpers'
import { report } from './figures'

/**
 * The kill test: a child process writes db.json and a transcript as fast as
 * it can, acknowledging each write once it has resolved, and is SIGKILLed at
 * a random moment, 100 times over the same data folder. After every kill:
 * db.json parses and holds the last acknowledged save (or the one in
 * flight), the transcript holds every acknowledged append, in order, and at
 * most its last line is torn; the next run takes the lock over, seals the
 * torn line and goes on.
 */

const KILLS = 100
/** Longest wait after the child's first acknowledgements before the kill. */
const MAX_DELAY_MS = 80
const SEED = Number(process.env.KILL_TEST_SEED ?? 20261123)

let root: string
let bundle: string

beforeAll(async () => {
  root = await tempDir('kill')
  // One bundle for the 100 children: starting TypeScript through tsx each time would cost seconds.
  const { build } = await import('esbuild')
  bundle = join(root, 'kill-writer.mjs')
  await build({
    entryPoints: [fileURLToPath(new URL('./kill-writer.ts', import.meta.url))],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error'
  })
})

afterAll(() => removeDir(root))

/** A small seeded generator (mulberry32): the kill moments are random but a failure can be replayed with its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Run {
  lastSave: number
  lastAppend: number
  stderr: string
}

/** Starts the writer, kills it `delayMs` after it has acknowledged a save and an append, and collects what it acknowledged. */
function runAndKill(dataDir: string, run: number, delayMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, dataDir, String(run)], { stdio: ['ignore', 'pipe', 'pipe'] })
    const result: Run = { lastSave: 0, lastAppend: 0, stderr: '' }
    let buffered = ''
    let armed = false
    let ended = 0
    const finish = (): void => {
      if (++ended === 3) resolve(result)
    }
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (text: string) => {
      buffered += text
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const line of lines) {
        const [kind, n] = line.split(' ')
        if (kind === 'S') result.lastSave = Number(n)
        if (kind === 'T') result.lastAppend = Number(n)
      }
      if (!armed && result.lastSave > 0 && result.lastAppend > 0) {
        armed = true
        setTimeout(() => child.kill('SIGKILL'), delayMs)
      }
    })
    child.stderr.on('data', (chunk: Buffer) => (result.stderr += chunk.toString()))
    child.stdout.on('end', finish)
    child.stderr.on('end', finish)
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`run ${run}: the writer ended by itself (${code ?? signal}): ${result.stderr}`))
      else finish()
    })
  })
}

async function readFrom(file: string, offset: number): Promise<Buffer> {
  const handle = await open(file, 'r')
  try {
    const size = (await handle.stat()).size
    const buffer = Buffer.alloc(size - offset)
    await handle.read(buffer, 0, buffer.length, offset)
    return buffer
  } finally {
    await handle.close()
  }
}

describe('killed at random moments', () => {
  it(`${KILLS} SIGKILLs: db.json always parses, every acknowledged write is there, at most the last transcript line is torn`, async () => {
    const dataDir = join(root, 'data')
    const transcript = join(dataDir, 'transcripts', 'kill.jsonl')
    const next = random(SEED)
    const started = Date.now()
    let verified = 0
    let pendingTorn: string | null = null
    let torn = 0
    let savesInFlight = 0
    let appendsInFlight = 0
    let acknowledgedSaves = 0
    let acknowledgedAppends = 0
    let appendedLines = 0

    for (let run = 1; run <= KILLS; run++) {
      const { lastSave, lastAppend } = await runAndKill(dataDir, run, Math.floor(next() * MAX_DELAY_MS))
      acknowledgedSaves += lastSave
      acknowledgedAppends += lastAppend

      // db.json parses, and holds the last acknowledged save or the one that was on its way.
      const db = JSON.parse(readFileSync(join(dataDir, 'db.json'), 'utf8')) as { projects: { id: string; name: string }[] }
      const saved = /^run (\d+) save (\d+)$/.exec(db.projects.find((p) => p.id === 'counter')?.name ?? '')
      expect(saved && Number(saved[1]), `run ${run}: db.json is from this run`).toBe(run)
      const onDisk = Number(saved![2])
      expect([lastSave, lastSave + 1], `run ${run}: db.json has save ${onDisk}, last acknowledged ${lastSave}`).toContain(onDisk)
      if (onDisk > lastSave) savesInFlight++

      // The transcript, from where the last check stopped.
      const text = (await readFrom(transcript, verified)).toString('utf8')
      const lines = text.split('\n')
      const tail = lines.pop()!
      let first = 0
      if (pendingTorn !== null) {
        // The line torn by the previous kill, sealed with a newline by this run before its first append.
        expect(lines[0], `run ${run}: the torn line was sealed`).toBe(pendingTorn)
        first = 1
      }
      const appended = lines.slice(first).map((line, i) => {
        const record = JSON.parse(line) as { t: string; message: string }
        const match = /^run (\d+) append (\d+) /.exec(record.message)
        expect(match && [Number(match[1]), Number(match[2])], `run ${run}: line ${i} in order`).toEqual([run, i + 1])
        return record
      })
      expect([lastAppend, lastAppend + 1], `run ${run}: ${appended.length} appends on disk, last acknowledged ${lastAppend}`).toContain(
        appended.length
      )
      if (appended.length > lastAppend) appendsInFlight++
      if (tail !== '') {
        // A torn line: only ever the one append that was on its way, never an acknowledged one.
        expect(appended.length, `run ${run}: a torn line after an unacknowledged append`).toBe(lastAppend)
        expect('{"t":"error"'.startsWith(tail.slice(0, 12)), `run ${run}: the torn line is the start of a record`).toBe(true)
        torn++
        pendingTorn = tail
      } else {
        pendingTorn = null
      }
      appendedLines += lines.length
      verified = statSync(transcript).size - Buffer.byteLength(tail)
    }

    // After all of it: the whole transcript reads, skipping exactly the torn lines; db.json opens without a warning.
    const whole = await readTranscript(transcript)
    expect(whole.skippedLines).toBe(torn)
    expect(whole.records.length + whole.skippedLines).toBe(whole.nextSeq)
    const { warnings } = await Store.open(dataDir, [])
    expect(warnings).toEqual([])

    report('kill', {
      kills: KILLS,
      seed: SEED,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      acknowledgedSaves,
      acknowledgedAppends,
      killsWithASaveOnItsWay: savesInFlight,
      killsWithAnAppendOnItsWay: appendsInFlight,
      tornTranscriptLines: torn,
      transcriptLines: whole.nextSeq,
      transcriptMB: Math.round((statSync(transcript).size / 1048576) * 10) / 10,
      lostAcknowledgedWrites: 0
    })
    expect(appendedLines).toBeGreaterThan(0)
  }, 180_000)
})
