import { appendFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseTranscript, readTranscript, TranscriptWriter } from '../../electron/host/transcripts'
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
