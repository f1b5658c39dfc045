import { promises as fs } from 'node:fs'
import { applyRecordAt } from '../../../shared/thread-fold'
import { createThread, type Thread, type ThreadEntry } from '../../../shared/thread'
import type { Pause } from '../storage/slices'
import { transcriptLines } from '../storage/transcript-stream'
import { parseLine } from '../storage/transcripts'
import type { EntryText } from './index-file'

/**
 * What the search index takes in: the searchable text of each thread entry
 * (a whole message, thought, tool call title, plan, error), from a transcript
 * read and folded with the same `applyRecordAt` as everywhere else or from a
 * live session's fold, and what a transcript is on disk (its signature), so
 * that one unchanged since it was read is not read again.
 */

/** Longer entries are indexed by their start (a pasted log is not worth more). */
const MAX_ENTRY_CHARS = 100_000

/**
 * What a transcript is on disk (size, mtime, inode): appended, rewritten or
 * replaced, it differs. A missing file has one too (a session may have none yet).
 */
export async function signatureOf(file: string): Promise<string | null> {
  try {
    const stat = await fs.stat(file)
    return `${stat.size}:${stat.mtimeMs}:${stat.ino}`
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : null
  }
}

/** The size a signature (`signatureOf`) names, if it names one. */
export function sizeOf(signature: string | null): number | undefined {
  const size = signature ? Number.parseInt(signature, 10) : NaN
  return Number.isFinite(size) ? size : undefined
}

/** The searchable text of a thread entry, or null for entries with nothing to find (turn ends, permissions). */
export function entryText(entry: ThreadEntry): string | null {
  let text: string
  switch (entry.kind) {
    case 'user':
    case 'assistant':
    case 'thought':
      text = entry.text
      break
    case 'tool_call':
      text = entry.title
      break
    case 'plan':
      text = entry.entries.map((e) => e.content).join('\n')
      break
    case 'error':
      text = entry.message
      break
    case 'notice':
      text = [entry.title, entry.description ?? ''].join('\n')
      break
    case 'session_message':
      text = entry.text
      break
    case 'subagent':
      // A subagent is found by its title, what it is for and what it said and did.
      text = [entry.title ?? '', entry.description ?? '', ...entry.thread.entries.map((child) => entryText(child) ?? '')].join('\n')
      break
    default:
      return null
  }
  text = text.trim()
  if (!text) return null
  return text.length > MAX_ENTRY_CHARS ? text.slice(0, MAX_ENTRY_CHARS) : text
}

/** A transcript's entries as the index takes them: the searchable text of each, and the seq of the record that started it. */
export interface Entries {
  texts: Map<string, EntryText>
  seqs: Map<string, number>
}

/**
 * Reads a transcript and folds it, noting the seq (line number) of the record
 * that started each entry. A damaged line is skipped, as everywhere. Read a
 * chunk at a time, and at each prompt the turns before it give their text and
 * are let go of: however long the transcript, the fold holds one turn. In
 * slices, waiting out `pause` between them (transcriptLines). `knownSize`: its
 * size by the stat of its signature, taken just before (a small one is read at once).
 */
export async function readEntries(file: string, pause?: Pause, knownSize?: number): Promise<Entries> {
  const thread = createThread()
  const texts = new Map<string, EntryText>()
  const seqs = new Map<string, number>()
  const harvest = (): void => {
    for (const [id, text] of textsOf(thread)) texts.set(id, text)
    thread.entries = []
    // A later update of an earlier turn's tool call (rare) shows as a card of its own: its title is still found.
    thread.keyed.clear()
  }
  for await (const { seq, line } of transcriptLines(file, Infinity, pause, knownSize)) {
    if (!line) continue
    const record = parseLine(line)
    if (!record) continue
    if (record.t === 'prompt') harvest()
    const before = thread.entries.length
    applyRecordAt(thread, record, seq)
    if (record.t === 'reset') {
      // A reset (session/load replay) empties the conversation: what follows starts again.
      seqs.clear()
      texts.clear()
    }
    for (let i = thread.entries.length < before ? 0 : before; i < thread.entries.length; i++) {
      const id = thread.entries[i].id
      if (!seqs.has(id)) seqs.set(id, seq)
    }
  }
  harvest()
  return { texts, seqs }
}

/** The searchable text of each entry of a thread (of its first `count`), by entry id. */
export function textsOf(thread: Thread, count = thread.entries.length): Map<string, EntryText> {
  const texts = new Map<string, EntryText>()
  for (let i = 0; i < count; i++) {
    const entry = thread.entries[i]
    const text = entryText(entry)
    if (text) texts.set(entry.id, { kind: entry.kind, text })
  }
  return texts
}
