import { promises as fs } from 'node:fs'
import MiniSearch, { type AsPlainObject, type Options } from 'minisearch'
import { AtomicTextFile } from '../storage/atomic-file'
import { slicer, type Pause } from '../storage/slices'
import { whenQuiet } from './quiet-start'

/**
 * The search index as kept in the data folder (`search-index.json`), and the
 * reading and writing of it in slices: at 10,000 sessions the file is about
 * 10 MB, which takes the Host a second or more to parse and load in one go on
 * a loaded machine. It is JSON lines, so each line is parsed on its own and
 * the Host answers requests between slices of a few milliseconds:
 *
 * - the first line: `{ format, lines, projects, mini }`: `lines` how many lines
 *   follow (a file cut short is found), `projects` the name and path each
 *   project was indexed with, `mini` MiniSearch's serialisation (`toJSON`)
 *   without its four large parts;
 * - then `["sessions", {id: {title, signature, entries}}]` (per session: the
 *   title indexed, the transcript's size:mtime:inode when its entries were read
 *   from it, and `[entryId, kind, text, seq]` for each entry), and
 *   `["documentIds" | "fieldLength" | "storedFields", {...}]` and
 *   `["index", [[term, data], ...]]`: the large parts of MiniSearch's
 *   serialisation, a bounded number of items on each line, put back together
 *   and loaded with `MiniSearch.loadJSAsync` (which yields as it goes).
 */

/** Bumped when what is indexed or how (fields, tokenizer, entry texts, document ids, the file's lines) changes: an older file is rebuilt. */
const INDEX_FORMAT = 2

export interface IndexedDoc {
  id: string
  title: string
  text: string
}

export interface EntryText {
  kind: string
  text: string
}

export interface SessionDocs {
  /** The title the session's document was indexed with (null: none yet). */
  title: string | null
  /**
   * Size, mtime and inode of the transcript when the entries below were read
   * from it; null when they are not known to match it (never read, or live).
   */
  signature: string | null
  /** What is indexed for each entry, by entry id. */
  texts: Map<string, EntryText>
  /** The seq of the record that started each entry. */
  seqs: Map<string, number>
  /** How many entries of the live thread have been given a seq. */
  scanned: number
}

/** The index as read from the data folder, or as it is saved. */
export interface StoredIndex {
  mini: MiniSearch<IndexedDoc>
  projects: Map<string, { name: string; cwd: string }>
  sessions: Map<string, SessionDocs>
}

type SavedSession = { title: string | null; signature: string | null; entries: [string, string, string, number | null][] }
type Bulky = 'documentIds' | 'fieldLength' | 'storedFields'
const BULKY: Bulky[] = ['documentIds', 'fieldLength', 'storedFields']

interface SavedHead {
  format: number
  lines: number
  projects: Record<string, [name: string, cwd: string]>
  mini: Omit<AsPlainObject, Bulky | 'index'>
}

type SavedLine = ['sessions', Record<string, SavedSession>] | [Bulky, Record<string, unknown>] | ['index', AsPlainObject['index']]

/** Items on one line: a line stays well under a millisecond to parse. */
const SESSIONS_PER_LINE = 100
const KEYS_PER_LINE = 2_000
const TERMS_PER_LINE = 500
/** Document ids: a kind letter and the ids it stands for, separated by NUL (which no id holds). */
const SEP = '\u0000'

export function projectDocId(projectId: string): string {
  return `p${SEP}${projectId}`
}

export function sessionDocId(sessionId: string): string {
  return `s${SEP}${sessionId}`
}

export function entryDocId(sessionId: string, entryId: string): string {
  return `e${SEP}${sessionId}${SEP}${entryId}`
}

export function parseDocId(
  id: string
): { kind: 'project'; projectId: string } | { kind: 'session'; sessionId: string } | { kind: 'entry'; sessionId: string; entryId: string } | null {
  const rest = id.slice(2)
  switch (id.slice(0, 2)) {
    case `p${SEP}`:
      return { kind: 'project', projectId: rest }
    case `s${SEP}`:
      return { kind: 'session', sessionId: rest }
    case `e${SEP}`: {
      const at = rest.indexOf(SEP)
      return at < 0 ? null : { kind: 'entry', sessionId: rest.slice(0, at), entryId: rest.slice(at + 1) }
    }
    default:
      return null
  }
}

/** Reading was given up (the Host is closing). */
export class ReadAbandoned extends Error {}

/**
 * The index kept in `file`, or null when there is none or it cannot be used
 * (then said in the log: it is rebuilt from the transcripts). Read in slices
 * (waiting out `giveWay` between them: the Host answering the window);
 * throws `ReadAbandoned` when `abandoned()` says to stop. Throws nothing else.
 */
export async function readIndexFile(
  file: string,
  options: Options<IndexedDoc>,
  abandoned: () => boolean,
  giveWay?: Pause
): Promise<StoredIndex | null> {
  let data: Buffer
  try {
    data = await fs.readFile(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      console.warn(`search: the index ${file} could not be read (${(error as Error).message}); it is rebuilt from the transcripts`)
    }
    return null
  }
  try {
    return await parseIndexFile(data, options, abandoned, giveWay)
  } catch (error) {
    if (error instanceof ReadAbandoned) throw error
    console.warn(`search: the index ${file} is not usable (${(error as Error).message}); it is rebuilt from the transcripts`)
    return null
  }
}

/**
 * The saved index, checked: its format, its shape, that no line is missing,
 * and that the MiniSearch index holds exactly the documents the rest of the
 * file names. Throws what is wrong. The terms' lines and the sessions' lines
 * (most of the file) are parsed one at a time as they are taken in: what one
 * line parses into is garbage before the next is read, so the read's peak is
 * the index it builds, not that and the whole file's parse beside it. Each line
 * is decoded from the file's bytes on its own: the strings a parse keeps (the
 * entries' texts) never hold on to a string of the whole file.
 */
async function parseIndexFile(data: Buffer, options: Options<IndexedDoc>, abandoned: () => boolean, giveWay?: Pause): Promise<StoredIndex> {
  const slice = slicer(giveWay)
  const pause = async (): Promise<void> => {
    const wait = slice()
    if (wait) await wait
    if (abandoned()) throw new ReadAbandoned()
  }
  const lines = lineStarts(data)
  const lineAt = (i: number): string => data.toString('utf8', lines[i], i + 1 < lines.length ? lines[i + 1] - 1 : data.length)
  const startsWith = (i: number, prefix: Buffer): boolean =>
    data.compare(prefix, 0, prefix.length, lines[i], Math.min(lines[i] + prefix.length, data.length)) === 0
  const head = JSON.parse(lines.length > 0 ? lineAt(0) : '') as Partial<SavedHead> | null
  if (typeof head !== 'object' || head === null || Array.isArray(head)) throw new Error('not an index')
  if (head.format !== INDEX_FORMAT) throw new Error(`format ${String(head.format)}, this version uses ${INDEX_FORMAT}`)
  if (!isRecord(head.projects) || !isRecord(head.mini) || typeof head.lines !== 'number') throw new Error('projects or index missing')
  if (lines.length - 1 !== head.lines) throw new Error(`${lines.length - 1} of its ${head.lines} lines are there`)
  const plain: AsPlainObject = {
    ...(head.mini as Omit<AsPlainObject, Bulky | 'index'>),
    documentIds: {},
    fieldLength: {},
    storedFields: {},
    index: []
  }
  const sessionLines: number[] = []
  const termLines: number[] = []
  for (let i = 1; i < lines.length; i++) {
    // A line's kind is its start, as JSON.stringify writes it: the terms' and sessions' lines are parsed when taken in.
    if (startsWith(i, TERMS_LINE)) termLines.push(i)
    else if (startsWith(i, SESSIONS_LINE)) sessionLines.push(i)
    else {
      await pause()
      const [kind, part] = JSON.parse(lineAt(i)) as SavedLine
      if (BULKY.includes(kind as Bulky) && isRecord(part)) Object.assign(plain[kind as Bulky], part)
      else throw new Error(`line ${i + 1} is malformed`)
    }
  }
  // MiniSearch takes the terms in as an iterable (it yields to the event loop every 1,000 terms: a line is 500).
  plain.index = termsOf(termLines, lineAt, abandoned) as unknown as AsPlainObject['index']
  await pause()
  const mini = await MiniSearch.loadJSAsync<IndexedDoc>(plain, options)
  let documents = 0
  const projects = new Map<string, { name: string; cwd: string }>()
  for (const [id, value] of Object.entries(head.projects as Record<string, unknown>)) {
    if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'string') throw new Error(`project ${id} is malformed`)
    if (!mini.has(projectDocId(id))) throw new Error(`project ${id} is not in the index`)
    projects.set(id, { name: value[0], cwd: value[1] })
    documents++
  }
  const sessions = new Map<string, SessionDocs>()
  for (const i of sessionLines) {
    await pause()
    const [kind, part] = JSON.parse(lineAt(i)) as SavedLine
    if (kind !== 'sessions' || !isRecord(part)) throw new Error(`line ${i + 1} is malformed`)
    for (const [id, value] of Object.entries(part as Record<string, unknown>)) {
      if (sessions.has(id)) throw new Error(`session ${id} is named twice`)
      documents += takeSession(sessions, mini, id, value)
    }
  }
  if (mini.documentCount !== documents) throw new Error(`the index holds ${mini.documentCount} documents, the file names ${documents}`)
  return { mini, projects, sessions }
}

/** How the terms' and the sessions' lines start. */
const TERMS_LINE = Buffer.from('["index",')
const SESSIONS_LINE = Buffer.from('["sessions",')

/** Where each line of `data` starts (the file ends with a newline: no empty last line). */
function lineStarts(data: Buffer): number[] {
  const starts: number[] = []
  for (let at = 0; at < data.length;) {
    starts.push(at)
    const end = data.indexOf(10, at)
    if (end < 0) break
    at = end + 1
  }
  return starts
}

/** The terms of the index's lines, each line parsed as it is reached. */
function* termsOf(termLines: number[], lineAt: (i: number) => string, abandoned: () => boolean): Generator<AsPlainObject['index'][number]> {
  for (const i of termLines) {
    if (abandoned()) throw new ReadAbandoned()
    const [kind, part] = JSON.parse(lineAt(i)) as SavedLine
    if (kind !== 'index' || !Array.isArray(part)) throw new Error(`line ${i + 1} is malformed`)
    yield* part
  }
}

/** A session of the file, checked against the index, into `sessions`; how many of the index's documents it names. */
function takeSession(sessions: Map<string, SessionDocs>, mini: MiniSearch<IndexedDoc>, id: string, value: unknown): number {
  const { title, signature, entries } = (value ?? {}) as Partial<SavedSession>
  if ((title !== null && typeof title !== 'string') || (signature !== null && typeof signature !== 'string') || !Array.isArray(entries)) {
    throw new Error(`session ${id} is malformed`)
  }
  let documents = 0
  if (title !== null) {
    if (!mini.has(sessionDocId(id))) throw new Error(`session ${id} is not in the index`)
    documents++
  }
  const texts = new Map<string, EntryText>()
  const seqs = new Map<string, number>()
  for (const entry of entries) {
    const [entryId, kind, text, seq] = (Array.isArray(entry) ? entry : []) as unknown[]
    if (typeof entryId !== 'string' || typeof kind !== 'string' || typeof text !== 'string' || (seq !== null && typeof seq !== 'number')) {
      throw new Error(`an entry of session ${id} is malformed`)
    }
    if (!mini.has(entryDocId(id, entryId))) throw new Error(`an entry of session ${id} is not in the index`)
    texts.set(entryId, { kind, text })
    if (seq !== null) seqs.set(entryId, seq)
    documents++
  }
  sessions.set(id, { title, signature, texts, seqs, scanned: 0 })
  return documents
}

/**
 * The file's text for an index, a line at a time (written as it is made: the
 * whole text, its lines and its bytes were ~100 MB at once beside a
 * 100,000-entry conversation). What it holds is taken at once (MiniSearch's
 * `toJSON` copies the index; the entry lists are copied), so changes made
 * while the lines are written out are not part of it; the lines are made in
 * slices.
 */
export async function* indexFileLines(index: StoredIndex): AsyncGenerator<string> {
  const { documentIds, fieldLength, storedFields, index: terms, ...scalars } = index.mini.toJSON()
  const sessions: [string, SavedSession][] = []
  for (const [id, docs] of index.sessions) {
    const entries: SavedSession['entries'] = []
    for (const [entryId, { kind, text }] of docs.texts) entries.push([entryId, kind, text, docs.seqs.get(entryId) ?? null])
    sessions.push([id, { title: docs.title, signature: docs.signature, entries }])
  }
  const projects: SavedHead['projects'] = {}
  for (const [id, { name, cwd }] of index.projects) projects[id] = [name, cwd]
  const parts = [
    ['documentIds', Object.entries(documentIds)],
    ['fieldLength', Object.entries(fieldLength)],
    ['storedFields', Object.entries(storedFields)]
  ] as const
  const lines = [sessions.length / SESSIONS_PER_LINE, ...parts.map(([, keys]) => keys.length / KEYS_PER_LINE), terms.length / TERMS_PER_LINE]
  const head: SavedHead = { format: INDEX_FORMAT, lines: lines.reduce((sum, n) => sum + Math.ceil(n), 0), projects, mini: scalars }
  yield JSON.stringify(head) + '\n'
  const slice = slicer()
  const line = async (value: SavedLine): Promise<string> => {
    const wait = slice()
    if (wait) await wait
    return JSON.stringify(value) + '\n'
  }
  for (let i = 0; i < sessions.length; i += SESSIONS_PER_LINE) yield line(['sessions', Object.fromEntries(sessions.slice(i, i + SESSIONS_PER_LINE))])
  for (const [kind, keys] of parts) {
    for (let i = 0; i < keys.length; i += KEYS_PER_LINE) yield line([kind, Object.fromEntries(keys.slice(i, i + KEYS_PER_LINE))])
  }
  for (let i = 0; i < terms.length; i += TERMS_PER_LINE) yield line(['index', terms.slice(i, i + TERMS_PER_LINE)])
}

function isRecord(value: unknown): value is Record<string, never> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** How long a planned save waits at most for a quiet Host (a request never answered). */
const SAVE_WAITS_MS = 30_000

/**
 * The saves of the index to its file (atomically): only once the index is
 * complete (`index` gives it then, else null), and only if it changed since it
 * was loaded or last saved; a failure is logged. Saves run one after another,
 * each taking the index as it is when it starts.
 */
export class IndexSaves {
  private readonly file: AtomicTextFile
  /** The last save. */
  private saving: Promise<void> = Promise.resolve()
  private timer: NodeJS.Timeout | null = null
  /** The save planned (its first timer), until it runs or is cancelled: `whenQuiet` waits meanwhile. */
  private planned: NodeJS.Timeout | null = null

  constructor(
    file: string,
    private readonly index: () => (StoredIndex & { unsaved: boolean }) | null
  ) {
    this.file = new AtomicTextFile(file)
  }

  /**
   * Saves in `ms` (once; a save already planned stays), and then once `quietIn` says 0 (how long until the Host is
   * quiet), for at most `SAVE_WAITS_MS` more: the save makes the whole file's text, which a fork copying a long
   * conversation meanwhile would add its memory to (a 100,000-entry fork rose +190 MB with it, +32 without).
   */
  soon(ms: number, quietIn: () => number = () => 0): void {
    if (this.planned) return
    const planned = setTimeout(() => {
      this.timer = null
      void whenQuiet(quietIn, SAVE_WAITS_MS).then(() => {
        if (this.planned !== planned) return
        this.planned = null
        void this.save()
      })
    }, ms)
    planned.unref?.()
    this.planned = this.timer = planned
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.planned = null
  }

  save(): Promise<void> {
    this.saving = this.saving.then(async () => {
      const index = this.index()
      if (!index?.unsaved) return
      index.unsaved = false
      try {
        await this.file.writePieces(indexFileLines(index))
      } catch (error) {
        index.unsaved = true
        console.warn(`search: could not save the index to ${this.file.file}: ${(error as Error).message}`)
      }
    })
    return this.saving
  }
}
