/**
 * The victim of the kill test (kill.test.ts): opens the data folder as the
 * Host does (lock, db.json, a transcript) and writes as fast as it can, in
 * two loops at once. After each write has resolved (it is on disk) it prints
 * an acknowledgement on stdout: `S n` for the n-th store save, `T n` for the
 * n-th transcript append. The test kills it at a random moment.
 *
 * Usage: node kill-writer.mjs DATADIR RUN
 */
import { mkdirSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { acquireDataLock } from '../../electron/host/storage/data-lock'
import { Store } from '../../electron/host/storage/store'
import { readTranscriptTail } from '../../electron/host/storage/transcript-pages'
import { TranscriptWriter } from '../../electron/host/storage/transcripts'
import type { TranscriptRecord } from '../../shared/transcript'

const [dataDir, runText] = process.argv.slice(2)
const run = Number(runText)
const at = new Date().toISOString()
// Written straight to the pipe (fd 1): an acknowledgement queued in process.stdout when the kill comes would be lost,
// and the test would see a save on disk that it was never told of (seen under load: 10 saves ahead).
const ack = (line: string): void => {
  const bytes = Buffer.from(`${line}\n`)
  for (let done = 0; done < bytes.length;) {
    try {
      done += writeSync(1, bytes, done)
    } catch (error) {
      // A full pipe (the test reads slowly under load): try again.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
    }
  }
}

async function main(): Promise<void> {
  mkdirSync(join(dataDir, 'transcripts'), { recursive: true })
  await acquireDataLock(dataDir)
  const { store } = await Store.open(dataDir, [])
  const file = join(dataDir, 'transcripts', 'kill.jsonl')
  const tail = await readTranscriptTail(file, { limit: 1 })
  const writer = new TranscriptWriter(file, tail.nextSeq, tail.endsClean, (error) => {
    process.stderr.write(`transcript write failed: ${error.message}\n`)
    process.exit(3)
  })
  ack('ready')

  const storeLoop = async (): Promise<void> => {
    for (let n = 1; ; n++) {
      // Some bulk, so a write takes long enough to be interrupted now and then.
      store.data.projects = Array.from({ length: 40 }, (_, i) => ({
        id: i === 0 ? 'counter' : `bulk-${i}`,
        name: i === 0 ? `run ${run} save ${n}` : `bulk ${n} `.repeat(100),
        cwd: '/nowhere',
        createdAt: at
      }))
      await store.save()
      ack(`S ${n}`)
    }
  }
  const transcriptLoop = async (): Promise<void> => {
    for (let n = 1; ; n++) {
      // Every 8th record is 96 KB: a write of many pages, which a kill can tear.
      const padding = n % 8 === 0 ? 'x'.repeat(96 * 1024) : ''
      const record: TranscriptRecord = { t: 'error', at, message: `run ${run} append ${n} ${padding}` }
      writer.append(record)
      await writer.flush()
      ack(`T ${n}`)
    }
  }
  await Promise.all([storeLoop(), transcriptLoop()])
}

main().catch((error: Error) => {
  process.stderr.write(`kill-writer: ${error.stack ?? error.message}\n`)
  process.exit(2)
})
