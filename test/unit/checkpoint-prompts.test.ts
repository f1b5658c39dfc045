import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CheckpointPrompts } from '../../electron/host/storage/transcripts'
import type { TranscriptRecord } from '../../shared/transcript'

/**
 * What each checkpoint's turn asked, read from a transcript a chunk at a time (a long one is not read whole): the
 * same prompts whatever the chunks cut through, a torn last line read once it is whole.
 */

const at = '2026-11-29T00:00:00.000Z'
const line = (record: TranscriptRecord): string => JSON.stringify(record) + '\n'

describe('CheckpointPrompts', () => {
  it('reads each checkpoint’s prompt from a transcript longer than its chunk, and reads on from where it stopped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prompts-'))
    try {
      const file = join(dir, 's.jsonl')
      let text = ''
      for (let i = 0; i < 300; i++) {
        text += line({ t: 'checkpoint', at, index: i })
        // Long prompts (about 7 KB: 2 MB in all), so that the lines the 1 MB chunks cut through are prompts.
        text += line({ t: 'prompt', at, content: [{ type: 'text', text: `Question ${i}\né${'x'.repeat(7_000 + i)}` }] })
      }
      // A checkpoint whose prompt is still being written (torn).
      const torn = line({ t: 'prompt', at, content: [{ type: 'text', text: 'The last one' }] })
      await writeFile(file, text + line({ t: 'checkpoint', at, index: 300 }) + torn.slice(0, 20))
      const prompts = new CheckpointPrompts()
      const first = await prompts.of(file)
      expect(first.size).toBe(300)
      expect([...first].every(([index, prompt]) => prompt === `Question ${index}`)).toBe(true)
      await appendFile(file, torn.slice(20))
      expect((await prompts.of(file)).get(300)).toBe('The last one')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
