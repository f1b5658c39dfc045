import { promises, readlinkSync } from 'node:fs'
import { appendFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { currentView, parseTranscript, readTranscript, TranscriptWriter } from '../../electron/host/storage/transcripts'
import { currentViewOf, transcriptLines } from '../../electron/host/storage/transcript-stream'
import { readEntries, textsOf } from '../../electron/host/search/intake'
import { applyRecordAt } from '../../shared/thread-fold'
import { createThread } from '../../shared/thread'
import { readTranscriptLater, readTranscriptPage, readTranscriptTail } from '../../electron/host/storage/transcript-pages'
import type { TranscriptRecord } from '../../shared/transcript'
import { removeDir, tempDir } from '../helpers'

let dir: string
beforeEach(async () => (dir = await tempDir('transcripts')))
afterEach(() => removeDir(dir))

const at = '2026-01-01T00:00:00.000Z'
const stop = (n: number): TranscriptRecord => ({ t: 'stop', at, stopReason: `r${n}` })

describe('transcripts', () => {
  it('appends records in order with consecutive seqs, coalescing writes', async () => {
    const file = join(dir, 's.jsonl')
    const errors: Error[] = []
    const writer = new TranscriptWriter(file, 0, true, (e) => errors.push(e))
    const seqs = Array.from({ length: 50 }, (_, i) => writer.append(stop(i)))
    await writer.flush()
    expect(seqs).toEqual(Array.from({ length: 50 }, (_, i) => i))
    const contents = await readTranscript(file)
    expect(contents.records).toEqual(Array.from({ length: 50 }, (_, i) => stop(i)))
    expect(contents.nextSeq).toBe(50)
    expect(errors).toEqual([])
  })

  it('writes a flood of records arriving tick after tick whole and in order, and leaves the file closed once written', async () => {
    const file = join(dir, 'flood.jsonl')
    const errors: Error[] = []
    const writer = new TranscriptWriter(file, 0, true, (e) => errors.push(e))
    // Records keep coming while earlier ones are being written (a streamed reply): many writes, one run.
    for (let tick = 0; tick < 40; tick++) {
      for (let i = 0; i < 25; i++) writer.append(stop(tick * 25 + i))
      await new Promise((resolve) => setImmediate(resolve))
    }
    await writer.flush()
    const contents = await readTranscript(file)
    expect(contents.records).toEqual(Array.from({ length: 1_000 }, (_, i) => stop(i)))
    expect(errors).toEqual([])
    // Nothing holds the file once everything is written: it can be moved or removed (a session deleted) at once.
    const target = (fd: string): string | null => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'utf8' })
      } catch {
        return null // the folder's own listing, closed meanwhile
      }
    }
    const open = (await readdir('/proc/self/fd').catch(() => [])).map(target)
    expect(open.filter((target) => target === file)).toEqual([])
  })

  it('skips a torn last line and seals it before the next append, keeping seqs true', async () => {
    const file = join(dir, 's.jsonl')
    await writeFile(file, JSON.stringify(stop(0)) + '\n' + JSON.stringify(stop(1)) + '\n{"t":"upd')
    const torn = await readTranscript(file)
    expect(torn).toMatchObject({ nextSeq: 3, skippedLines: 1, endsClean: false })
    expect(torn.records).toHaveLength(2)

    const writer = new TranscriptWriter(file, torn.nextSeq, torn.endsClean, () => undefined)
    expect(writer.append(stop(3))).toBe(3)
    await writer.flush()
    const after = await readTranscript(file)
    expect(after.records.map((r) => (r as { stopReason: string }).stopReason)).toEqual(['r0', 'r1', 'r3'])
    expect(after).toMatchObject({ nextSeq: 4, skippedLines: 1, endsClean: true })
    // Line numbers are seqs: the record with seq 3 is on line 3.
    expect(JSON.parse((await readFile(file, 'utf8')).split('\n')[3])).toEqual(stop(3))
  })

  it('treats a missing or empty transcript as empty, and garbage lines as skipped', async () => {
    expect(await readTranscript(join(dir, 'none.jsonl'))).toMatchObject({ records: [], nextSeq: 0 })
    expect(parseTranscript('not json\n[1,2]\n')).toMatchObject({ records: [], skippedLines: 2, nextSeq: 2 })
    const file = join(dir, 'g.jsonl')
    await appendFile(file, 'garbage\n' + JSON.stringify(stop(1)) + '\n')
    expect((await readTranscript(file)).records).toEqual([stop(1)])
  })
})

describe('reading a long transcript from its end', () => {
  const header: TranscriptRecord = { t: 'header', v: 2, id: 's', acpSessionId: 'x', agentId: 'a', projectId: 'p', cwd: '/p', createdAt: at }
  const prompt = (n: number): TranscriptRecord => ({ t: 'prompt', at, content: [{ type: 'text', text: `turn ${n}` }] })
  const chunk = (text: string): TranscriptRecord => ({
    t: 'update',
    at,
    update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }
  })

  /** header, then turns of a prompt and 9 chunks: 1 + 10 * turns lines. */
  async function longTranscript(turns: number): Promise<{ file: string; records: TranscriptRecord[] }> {
    const records: TranscriptRecord[] = [header]
    for (let t = 0; t < turns; t++) {
      records.push(prompt(t))
      for (let c = 0; c < 9; c++) records.push(chunk(`${t}.${c} `.repeat(1 + ((t * 7 + c) % 40))))
    }
    const file = join(dir, 'long.jsonl')
    await writeFile(file, records.map((r) => JSON.stringify(r) + '\n').join(''))
    return { file, records }
  }

  it('returns the last records from the start of a turn, and pages back to the first line', async () => {
    const { file, records } = await longTranscript(300)
    const tail = await readTranscriptTail(file, { limit: 25 })
    expect(tail.nextSeq).toBe(3001)
    expect(tail.endsClean).toBe(true)
    // At least 25 records, widened to the start of the turn: 3 whole turns.
    expect(tail.records).toEqual(records.slice(2971))
    expect(tail.records[0]).toEqual(prompt(297))
    expect(tail.firstSeq).toBe(2971)
    const text = await readFile(file, 'utf8')
    expect(text.slice(tail.firstOffset).split('\n')[0]).toBe(JSON.stringify(prompt(297)))

    let cursor = { seq: tail.firstSeq, offset: tail.firstOffset }
    let all = tail.records
    let pages = 0
    while (cursor.seq > 0) {
      const page = await readTranscriptPage(file, cursor.seq, cursor.offset, { limit: 100 })
      expect(page.firstSeq).toBeLessThan(cursor.seq)
      all = page.records.concat(all)
      cursor = { seq: page.firstSeq, offset: page.firstOffset }
      pages++
    }
    expect(pages).toBe(30)
    expect(all).toEqual(records)
    expect(cursor.offset).toBe(0)
  })

  it('counts a torn last line as a skipped line, as the whole read does', async () => {
    const { file } = await longTranscript(3)
    await appendFile(file, '{"t":"update","at":"2026')
    const whole = await readTranscript(file)
    const tail = await readTranscriptTail(file, { limit: 5 })
    expect(tail).toMatchObject({ nextSeq: whole.nextSeq, endsClean: false, skippedLines: 1, firstSeq: 21 })
    expect(tail.records).toEqual(whole.records.slice(-9 - 1))
  })

  it('stops at a byte budget even inside one long turn, but never cuts a line', async () => {
    const records: TranscriptRecord[] = [
      header,
      prompt(0),
      chunk('x'.repeat(3_000_000)),
      ...Array.from({ length: 2000 }, (_, i) => chunk(`small ${i}`))
    ]
    const file = join(dir, 'big.jsonl')
    await writeFile(file, records.map((r) => JSON.stringify(r) + '\n').join(''))
    const tail = await readTranscriptTail(file, { limit: 10, maxBytes: 64 * 1024 })
    // No turn start within the budget: it stops after about the budget, well short of the 3 MB line.
    expect(tail.records.length).toBeGreaterThan(10)
    expect(tail.records.length).toBeLessThan(2000)
    expect(tail.records).toEqual(records.slice(-tail.records.length))
    // Paging back in 64 KB steps reaches the start; the page that meets the huge line carries it whole.
    let cursor = { seq: tail.firstSeq, offset: tail.firstOffset }
    let all = tail.records
    const sizes: number[] = []
    while (cursor.seq > 0) {
      const page = await readTranscriptPage(file, cursor.seq, cursor.offset, { limit: 10_000, maxBytes: 64 * 1024 })
      sizes.push(page.records.length)
      all = page.records.concat(all)
      cursor = { seq: page.firstSeq, offset: page.firstOffset }
    }
    expect(all.length === records.length && all.every((r, i) => JSON.stringify(r) === JSON.stringify(records[i]))).toBe(true)
    expect(sizes.length).toBeGreaterThan(3)
  })

  it('knows a grown transcript and refuses a cursor that is not at the start of a line', async () => {
    const { file } = await longTranscript(2)
    expect((await readTranscriptTail(file, { limit: 1 })).nextSeq).toBe(21)
    await appendFile(file, JSON.stringify(prompt(9)) + '\n')
    const tail = await readTranscriptTail(file, { limit: 1 })
    expect(tail).toMatchObject({ nextSeq: 22, firstSeq: 21, records: [prompt(9)] })
    await expect(readTranscriptPage(file, 5, tail.firstOffset - 3, { limit: 1 })).rejects.toThrow(/no longer exists/)
    expect(await readTranscriptTail(join(dir, 'none.jsonl'), { limit: 5 })).toMatchObject({ records: [], nextSeq: 0, firstSeq: 0 })
  })
})

describe('writing under trouble', () => {
  it('keeps records whose write failed and writes them, in order, once it can', async () => {
    const file = join(dir, 'blocked.jsonl')
    // A folder where the file should be: every append fails (EISDIR) until it goes.
    await mkdir(file)
    const errors: Error[] = []
    const writer = new TranscriptWriter(file, 0, true, (e) => errors.push(e))
    writer.append(stop(0))
    writer.append(stop(1))
    await writer.flush()
    expect(errors.length).toBeGreaterThan(0)
    await rm(file, { recursive: true })
    writer.append(stop(2))
    await writer.flush()
    const contents = await readTranscript(file)
    expect(contents.records).toEqual([stop(0), stop(1), stop(2)])
    expect(contents).toMatchObject({ nextSeq: 3, skippedLines: 0 })
  })
})

describe('reading a long transcript a chunk at a time', () => {
  /** Turns with a tool call updated later in its turn, long lines (past the 1 MB chunk) and non-ASCII text. */
  function longTranscript(turns: number): TranscriptRecord[] {
    const records: TranscriptRecord[] = [{ t: 'header', v: 2, id: 's', acpSessionId: '', agentId: 'a', projectId: 'p', cwd: '/', createdAt: at }]
    for (let i = 0; i < turns; i++) {
      records.push(
        { t: 'prompt', at, content: [{ type: 'text', text: `question ${i} — ünïcode ✓` }] },
        { t: 'update', at, update: { sessionUpdate: 'tool_call', toolCallId: `t${i}`, title: `first title ${i}`, status: 'in_progress' } },
        {
          t: 'update',
          at,
          update: {
            sessionUpdate: 'agent_message_chunk',
            messageId: `m${i}`,
            content: { type: 'text', text: `answer ${i} ` + 'x'.repeat(i % 97 === 0 ? 1_500_000 : 10) }
          }
        },
        { t: 'update', at, update: { sessionUpdate: 'tool_call_update', toolCallId: `t${i}`, title: `final title ${i}`, status: 'completed' } },
        { t: 'stop', at, stopReason: 'end_turn' }
      )
      // An earlier version's replay: what came before is superseded.
      if (i === 300) records.push({ t: 'reset', at, reason: 'load' })
    }
    return records
  }

  it('the search intake finds what a whole fold finds, with each entry’s seq', async () => {
    const records = longTranscript(600)
    const file = join(dir, 'search-long.jsonl')
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n')
    // The whole fold: each entry's seq is that of the record that made it; a reset starts again.
    const whole = createThread()
    const wholeSeqs = new Map<string, number>()
    records.forEach((record, seq) => {
      const before = whole.entries.length
      applyRecordAt(whole, record, seq)
      if (whole.entries.length < before) wholeSeqs.clear()
      for (const entry of whole.entries.slice(whole.entries.length < before ? 0 : before)) if (!wholeSeqs.has(entry.id)) wholeSeqs.set(entry.id, seq)
    })
    const { texts, seqs } = await readEntries(file)
    expect(texts).toEqual(textsOf(whole))
    expect([...texts.values()].some((t) => t.text === 'final title 599')).toBe(true)
    expect(texts.size).toBe(299 * 3)
    expect(seqs).toEqual(wholeSeqs)
  })

  it('gives the Host a turn between its lines every few ms, and waits out a pause there (work in the background giving way to a window)', async () => {
    // 400 short lines, in the first read (64 KB): the reader takes them in one go, but for the slices.
    const file = join(dir, 'sliced.jsonl')
    await writeFile(file, Array.from({ length: 400 }, (_, i) => JSON.stringify(stop(i))).join('\n') + '\n')
    // The clock moves a millisecond each time it is read: a slice (8 ms) is a few lines.
    let clock = 0
    const now = vi.spyOn(performance, 'now').mockImplementation(() => ++clock)
    try {
      // Something else the Host has to do, asked as the first line comes: done before the last one, not after it.
      let linesBefore = -1
      let lines = 0
      for await (const { seq } of transcriptLines(file)) {
        if (seq === 0) setImmediate(() => (linesBefore = lines))
        lines++
      }
      expect(lines).toBe(400)
      expect(linesBefore).toBeGreaterThan(0)
      expect(linesBefore).toBeLessThan(20)
      // A pause asked for at a slice: no line is given until it is over.
      let release!: () => void
      let pausing: Promise<void> | null = new Promise<void>((resolve) => (release = resolve))
      let during = 0
      lines = 0
      const read = (async () => {
        for await (const _line of transcriptLines(file, Infinity, () => pausing)) lines++
      })()
      while (lines === 0 || pausing) {
        await new Promise((resolve) => setImmediate(resolve))
        if (lines > 0 && during === 0) {
          during = lines
          for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve))
          expect(lines).toBe(during)
          pausing = null
          release()
        }
      }
      await read
      expect(during).toBeLessThan(20)
      expect(lines).toBe(400)
    } finally {
      now.mockRestore()
    }
  })

  it('reads a small transcript whose size it is given in one call, its lines as a read in chunks gives them', async () => {
    // Its turns past the first (whose answer is 1.5 MB): a few KB.
    const records = longTranscript(4).slice(6)
    const file = join(dir, 'small.jsonl')
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n{"t":"update","at":"torn')
    const lines = async (upTo?: number, size?: number): Promise<{ seq: number; line: string; torn?: true }[]> => {
      const out: { seq: number; line: string; torn?: true }[] = []
      for await (const line of transcriptLines(file, upTo, undefined, size)) out.push(line)
      return out
    }
    const chunked = await lines()
    expect(chunked).toHaveLength(records.length + 1)
    expect(chunked.at(-1)).toEqual({ seq: records.length, line: '{"t":"update","at":"torn', torn: true })
    const { size } = await stat(file)
    // A build's reads (the size from the signature's stat): no file handle opened, read and closed, each a hand-off to libuv's threads.
    const open = vi.spyOn(promises, 'open')
    try {
      expect(await lines(undefined, size)).toEqual(chunked)
      expect(await lines(4, size)).toEqual(chunked.slice(0, 4))
      expect((await readEntries(file, undefined, size)).texts).toEqual((await readEntries(file)).texts)
      expect(open).toHaveBeenCalledTimes(1)
      // Grown since its stat: read whole all the same.
      await appendFile(file, '"}\n' + JSON.stringify(records[1]) + '\n')
      expect((await lines(undefined, size)).map((l) => l.seq)).toEqual([...chunked.map((l) => l.seq), records.length + 1])
      // Gone since: no lines, as a missing file has none.
      await rm(file)
      expect(await lines(undefined, size)).toEqual([])
      expect(open).toHaveBeenCalledTimes(1)
    } finally {
      open.mockRestore()
    }
  })

  it('currentViewOf gives what currentView gives, the lines that straddle chunks and the one torn at the end included', async () => {
    const records = longTranscript(400)
    const file = join(dir, 'view-long.jsonl')
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n{"t":"update","at":"torn')
    const streamed: TranscriptRecord[] = []
    for await (const record of currentViewOf(file)) streamed.push(record)
    expect(streamed).toEqual(currentView(records))
    const upTo: TranscriptRecord[] = []
    for await (const record of currentViewOf(file, 1_000)) upTo.push(record)
    expect(upTo).toEqual(currentView(records.slice(0, 1_000)))
  })
})

describe('reading on from a cursor, and line counts kept across runs', () => {
  const lineOf = (r: TranscriptRecord): string => JSON.stringify(r)
  const turns = (from: number, count: number): TranscriptRecord[] =>
    Array.from({ length: count }, (_, k): TranscriptRecord[] => [
      { t: 'prompt', at, content: [{ type: 'text', text: `q${from + k}` }] },
      stop(from + k),
      stop(from + k)
    ]).flat()

  it('pages forward to the end from the start of a turn, leaves a torn last line for later, and refuses a cursor mid-line', async () => {
    const records = turns(0, 50)
    const file = join(dir, 'later.jsonl')
    await writeFile(file, records.map(lineOf).join('\n') + '\n{"t":"stop","at":"torn')
    const read: TranscriptRecord[] = []
    let from = 0
    let offset = 0
    for (let pages = 0; pages < 100; pages++) {
      const page = await readTranscriptLater(file, from, offset, { limit: 10 })
      read.push(...page.records)
      expect(page.records[0]?.t ?? 'prompt').toBe('prompt')
      from = page.endSeq
      offset = page.endOffset
      if (page.atEnd) break
    }
    expect(read).toEqual(records)
    expect(from).toBe(records.length)
    await expect(readTranscriptLater(file, 1, 5, { limit: 1 })).rejects.toThrow(/no longer exists/)
  })

  it('a long transcript’s line count is kept for the next run, and not trusted once the file was replaced', async () => {
    const file = join(dir, 'counted.jsonl')
    const big = (text: string, n: number): string => Array.from({ length: n }, (_, i) => `{"t":"stop","at":"${text}${i}"}`).join('\n') + '\n'
    await writeFile(file, big('a'.repeat(100), 40_000))
    const nextRun = async (): Promise<typeof import('../../electron/host/storage/transcript-pages')> => {
      vi.resetModules()
      return import('../../electron/host/storage/transcript-pages')
    }
    expect((await (await nextRun()).readTranscriptTail(file, { limit: 1 })).nextSeq).toBe(40_000)
    await appendFile(file, big('b', 3))
    expect((await (await nextRun()).readTranscriptTail(file, { limit: 1 })).nextSeq).toBe(40_003)
    // Replaced by another transcript of the same name, longer, with other lines: counted again.
    await writeFile(file, big('c'.repeat(50), 90_000))
    expect((await (await nextRun()).readTranscriptTail(file, { limit: 1 })).nextSeq).toBe(90_000)
  })
})
