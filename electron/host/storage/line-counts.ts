import { promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { PRIVATE_FILE_MODE } from './private-files'

/**
 * How many lines a transcript had at a size, kept across runs in the
 * transcripts folder (`.line-counts.json`): a long transcript opened at its
 * tail needs its line count (the next seq), and counting 100 MB at every
 * start of the Host is most of the open. Only a cache: a count is trusted
 * only while the bytes just before its size are still those it saw
 * (transcripts only grow), and a missing or damaged file is no count.
 */

export interface LineCount {
  size: number
  newlines: number
}

/** Bytes before a count's size that must still be there for it to hold. */
const WITNESS_BYTES = 64
/** Counts kept at most; the least recently used go first. */
const MAX_KEPT = 500
/** A count this many bytes past what the file last held is saved (smaller counts are cheap to redo). */
const WORTH_SAVING_BYTES = 4 * 1024 * 1024

const FILE_NAME = '.line-counts.json'

interface Kept extends LineCount {
  witness: string
}

const folders = new Map<string, Promise<Map<string, Kept>>>()
const saving = new Map<string, Promise<void>>()

/** The count kept for `file` (a transcript), if it still holds for the file as it is now. */
export async function keptLineCount(file: string, handle: fs.FileHandle, size: number): Promise<LineCount | null> {
  const kept = (await countsOf(dirname(file))).get(basename(file))
  if (!kept || kept.size > size) return null
  const witness = await witnessOf(handle, kept.size)
  return witness === kept.witness ? { size: kept.size, newlines: kept.newlines } : null
}

/** Keeps a fresh count of `file` (saved when counting it again would cost a read of megabytes). */
export async function keepLineCount(file: string, handle: fs.FileHandle, count: LineCount, counted: number): Promise<void> {
  const dir = dirname(file)
  const counts = await countsOf(dir)
  counts.delete(basename(file))
  counts.set(basename(file), { ...count, witness: await witnessOf(handle, count.size) })
  const oldest = counts.keys().next()
  if (counts.size > MAX_KEPT && !oldest.done) counts.delete(oldest.value)
  if (counted < WORTH_SAVING_BYTES) return
  const previous = saving.get(dir) ?? Promise.resolve()
  const next = previous.then(() => save(dir, counts)).catch(() => undefined)
  saving.set(dir, next)
  await next
}

function countsOf(dir: string): Promise<Map<string, Kept>> {
  let counts = folders.get(dir)
  if (!counts) {
    counts = load(dir)
    folders.set(dir, counts)
  }
  return counts
}

async function load(dir: string): Promise<Map<string, Kept>> {
  try {
    const value = JSON.parse(await fs.readFile(join(dir, FILE_NAME), 'utf8')) as Record<string, Kept>
    const counts = new Map<string, Kept>()
    for (const [name, kept] of Object.entries(value)) {
      if (Number.isInteger(kept?.size) && Number.isInteger(kept?.newlines) && typeof kept?.witness === 'string') counts.set(name, kept)
    }
    return counts
  } catch {
    return new Map()
  }
}

async function save(dir: string, counts: Map<string, Kept>): Promise<void> {
  const file = join(dir, FILE_NAME)
  const temporary = `${file}.${process.pid}.tmp`
  await fs.writeFile(temporary, JSON.stringify(Object.fromEntries(counts)), { mode: PRIVATE_FILE_MODE })
  await fs.rename(temporary, file)
}

async function witnessOf(handle: fs.FileHandle, size: number): Promise<string> {
  const length = Math.min(WITNESS_BYTES, size)
  const buffer = Buffer.alloc(length)
  await handle.read(buffer, 0, length, size - length)
  return buffer.toString('base64')
}
