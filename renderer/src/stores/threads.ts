import { defineStore } from 'pinia'
import { markRaw, ref, toRaw } from 'vue'
import type { SessionSnapshot } from '../../../shared/contract'
import { applyRecordsAt, foldTail, TAIL_RECORDS } from '../../../shared/thread-fold'
import { createThread, type Thread } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import { host, messageOf } from '../host/client'
import { useNoticesStore } from './notices'
import { useProjectsStore } from './projects'
import { keepUnchanged } from './thread-keep'

/**
 * The thread cache: the threads of the sessions that were opened. A thread is
 * the snapshot from `sessions.open` (the transcript's tail) folded with the
 * shared `applyRecordAt`, then live `session.records` applied from the
 * snapshot's `nextSeq` on, once a frame, so a session opened mid-stream shows
 * each record exactly once; earlier pages are loaded on demand. Threads stay
 * after another session is opened: several may stream at once.
 */

export interface OpenThread {
  thread: Thread
  /** seq of the next record this thread expects (while it holds the conversation's end). */
  nextSeq: number
  skippedLines: number
  /** seq and byte offset of the first record shown: above 0, earlier records can still be loaded. */
  firstSeq: number
  firstOffset: number
  /**
   * Where the records shown end, when the window let go of the conversation's end (scrolled far up a long one):
   * the cursor later records are read from again. Null while it holds the end and follows what is appended.
   */
  later: { seq: number; offset: number } | null
  /**
   * The records shown, kept while earlier or later ones are missing: loading a page folds them all again, in order.
   */
  records: TranscriptRecord[] | null
  /** Where each page of `records` starts and how many records it has: the window lets go of whole pages. */
  pages: { seq: number; offset: number; count: number }[]
  loadingEarlier: boolean
  loadingLater: boolean
}

/** Records added by each "load earlier" (or later). */
const PAGE_RECORDS = 800
/**
 * Records a window holds at most (beyond its live end while it streams): scrolling through a conversation of any
 * length loads the pages it reaches and lets go of those far behind, so the page's memory stays that of a few pages.
 */
export const WINDOW_RECORDS = 4 * PAGE_RECORDS

/**
 * Records a page's fold takes in one task. A window taking in a page folds all it holds again (up to
 * WINDOW_RECORDS + a page): in one task, that and the render after it held a fling's frame (a long scroll's slowest
 * frames were those taking in a page: docs/BENCHMARKS.md, the long scroll). A slice is a fraction of a frame.
 */
const FOLD_SLICE_RECORDS = 400

/** The next task: what a slice of a page's fold waits for, so that the frames due meanwhile are drawn first. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      channel.port1.close()
      resolve()
    }
    channel.port2.postMessage(null)
  })
}

/** `foldTail`, FOLD_SLICE_RECORDS records a task (a run of chunks cut between two slices folds the same: applyRecordsAt). */
async function foldInTasks(records: TranscriptRecord[], nextSeq: number): Promise<Thread> {
  const thread = createThread()
  const first = nextSeq - records.length
  for (let at = 0; at < records.length; at += FOLD_SLICE_RECORDS) {
    if (at > 0) await nextTask()
    applyRecordsAt(thread, records.slice(at, at + FOLD_SLICE_RECORDS), first + at)
  }
  return thread
}

/** Records that arrived for a session while its snapshot was on its way, in order. */
type Held = { seq: number; records: TranscriptRecord[] }

export const useThreadsStore = defineStore('threads', () => {
  const notices = useNoticesStore()
  const threads = ref<Record<string, OpenThread>>({})
  /** Why a session's transcript could not be opened, by session id. */
  const loadErrors = ref<Record<string, string>>({})
  const loading = new Map<string, Promise<SessionSnapshot | null>>()
  const held = new Map<string, Held[]>()

  /** Resolves once the session's snapshot under way (if any) is in. */
  async function loaded(id: string): Promise<void> {
    await loading.get(id)
  }

  /** Fetches the snapshot and (re)builds the thread; live records meanwhile are held and applied after. */
  function load(id: string): Promise<SessionSnapshot | null> {
    const inFlight = loading.get(id)
    if (inFlight) return inFlight
    const waiting = hold(id)
    const run = (async (): Promise<SessionSnapshot | null> => {
      let loaded: SessionSnapshot | null = null
      try {
        const snapshot = await host().request('sessions.open', { id, tail: TAIL_RECORDS })
        // Fold the snapshot before it becomes reactive: one render however long the transcript is.
        threads.value[id] = {
          thread: foldTail(snapshot.records, snapshot.nextSeq),
          nextSeq: snapshot.nextSeq,
          skippedLines: snapshot.skippedLines,
          firstSeq: snapshot.firstSeq,
          firstOffset: snapshot.firstOffset,
          later: null,
          records: snapshot.firstSeq > 0 ? markRaw(snapshot.records) : null,
          pages: [{ seq: snapshot.firstSeq, offset: snapshot.firstOffset, count: snapshot.records.length }],
          loadingEarlier: false,
          loadingLater: false
        }
        useProjectsStore().upsertSession(snapshot.record)
        delete loadErrors.value[id]
        loaded = snapshot
        if (snapshot.skippedLines > 0) {
          notices.report(
            `${snapshot.skippedLines} damaged line${snapshot.skippedLines === 1 ? '' : 's'} of “${snapshot.record.title}” could not be read and ${snapshot.skippedLines === 1 ? 'was' : 'were'} skipped.`
          )
        }
      } catch (error) {
        loadErrors.value[id] = messageOf(error)
        notices.report(`Could not open the conversation: ${messageOf(error)}`)
      } finally {
        // Done before the held records are applied: one that finds records missed loads again.
        loading.delete(id)
        // Without a fresh snapshot the held records cannot be placed safely; the next open fetches them.
        release(id, waiting, loaded !== null)
      }
      return loaded
    })()
    loading.set(id, run)
    return run
  }

  /**
   * A `session.records` event: `seq` is records[0]'s, the rest follow
   * consecutively. Records are applied once per animation frame, in arrival
   * order: however fast an agent streams, the thread is folded and rendered
   * at most once a frame. (A timer stands in when frames stop, e.g. in a
   * hidden window.) When the last frame that showed records ran late
   * (several sessions streaming on a busy machine), the page falls back:
   * one frame shows nothing, leaving the browser to catch up, and the next
   * shows only the session that waited longest, the others following in the
   * frames after, each session's records in order. A page that keeps up
   * shows every session every frame; one that does not lays out one growing
   * answer every other frame instead of all of them every frame.
   */
  function receiveRecords(id: string, seq: number, records: TranscriptRecord[]): void {
    incoming.push({ id, seq, records })
    schedule()
  }

  const incoming: { id: string; seq: number; records: TranscriptRecord[] }[] = []
  const FLUSH_FALLBACK_MS = 100
  /** A frame later than this after the last one (two 60 Hz frames are 33 ms) means the page is behind. */
  const LATE_FRAME_MS = 24
  let flushScheduled = false
  let frame: number | null = null
  let fallback: ReturnType<typeof setTimeout> | null = null
  /** When the last frame that applied records ran (its rAF time); null after a flush outside a frame. */
  let lastFrameAt: number | null = null
  /** The last frame was left to the browser: the next one shows records whatever its lateness. */
  let skipped = false

  function schedule(): void {
    if (flushScheduled) return
    flushScheduled = true
    frame = typeof requestAnimationFrame === 'function' ? requestAnimationFrame(onFrame) : null
    fallback = setTimeout(flushRecords, FLUSH_FALLBACK_MS)
  }

  function unschedule(): void {
    flushScheduled = false
    if (frame !== null && typeof cancelAnimationFrame === 'function') cancelAnimationFrame(frame)
    if (fallback !== null) clearTimeout(fallback)
    frame = null
    fallback = null
  }

  function onFrame(now: number): void {
    if (!flushScheduled) return
    unschedule()
    // A long gap is a pause in the stream, not a late frame.
    const gap = lastFrameAt === null ? 0 : now - lastFrameAt
    const late = gap > LATE_FRAME_MS && gap < 500
    if (late && !skipped) {
      // Behind: this frame is left to the browser to catch up; the records wait for the next one.
      skipped = true
      schedule()
      return
    }
    skipped = false
    lastFrameAt = now
    // Still behind: this frame folds the session that has waited longest; the others go next frame.
    const first = incoming[0]
    applyIncoming(late && first && incoming.some((batch) => batch.id !== first.id) ? first.id : null)
    if (incoming.length > 0) schedule()
  }

  /** Applies every record received so far, of every session (the next frames would). */
  function flushRecords(): void {
    if (!flushScheduled) return
    unschedule()
    lastFrameAt = null
    applyIncoming(null)
  }

  /**
   * Applies the records of session `id` received so far, now (the others keep
   * waiting for their frame). A change of the session's state (a permission
   * asked, the turn ended) comes after its records at the Host: applied
   * before them it would show a question, or "idle", beside a reply still
   * missing its last words.
   */
  function catchUp(id: string): void {
    if (!incoming.some((batch) => batch.id === id)) return
    applyIncoming(id)
    if (incoming.length === 0) unschedule()
  }

  /** Applies the batches received (of session `only`, or of every session), in order; the others stay, in order. */
  function applyIncoming(only: string | null): void {
    for (const batch of incoming.splice(0)) {
      if (only === null || batch.id === only) applyRecords(batch.id, batch.seq, batch.records)
      else incoming.push(batch)
    }
  }

  function applyRecords(id: string, seq: number, records: TranscriptRecord[]): void {
    const queue = held.get(id)
    if (queue) {
      queue.push({ seq, records })
      return
    }
    const open = threads.value[id]
    // A window that let go of the end reads what is appended from the transcript when it comes back to it.
    if (!open || open.later) return
    if (seq > open.nextSeq) {
      // Records were missed (e.g. while the connection was down): fetch the snapshot again.
      void load(id)
      held.get(id)?.push({ seq, records })
      return
    }
    // What the thread already holds is skipped; the rest is folded at once (a run of chunks is one change of its entry).
    const from = open.nextSeq - seq
    if (from >= records.length) return
    const fresh = from > 0 ? records.slice(from) : records
    applyRecordsAt(open.thread, fresh, seq + from)
    if (open.records) for (const record of fresh) open.records.push(record)
    open.pages[open.pages.length - 1].count += fresh.length
    open.nextSeq = seq + records.length
  }

  /**
   * Loads the records before the first one shown (a long conversation opens
   * at its end) and folds the thread again with them; a window grown past
   * WINDOW_RECORDS lets go of its last pages. Resolves false when there is
   * nothing earlier.
   */
  async function loadEarlier(id: string): Promise<boolean> {
    const open = threads.value[id]
    if (!open || open.firstSeq === 0 || open.loadingEarlier || open.loadingLater || loading.has(id)) return false
    open.loadingEarlier = true
    let waiting: Held[] | null = null
    try {
      const page = await host().request('transcripts.read', {
        id,
        before: open.firstSeq,
        offset: open.firstOffset,
        limit: PAGE_RECORDS
      })
      // The thread may have been reloaded meanwhile (a reconnect): then this page no longer fits.
      if (threads.value[id] !== open) return false
      let records = page.records.concat(open.records ?? [])
      const pages = [{ seq: page.firstSeq, offset: page.firstOffset, count: page.records.length }, ...open.pages]
      let later = open.later
      for (let last = pages.at(-1); last && records.length > WINDOW_RECORDS && pages.length > 1; last = pages.at(-1)) {
        pages.pop()
        records = records.slice(0, records.length - last.count)
        later = { seq: last.seq, offset: last.offset }
      }
      // Folded again whole (earlier records can change the entries after them), a slice a task; the entries that came out
      // the same stay the objects shown.
      waiting = hold(id)
      const folded = await foldInTasks(records, later?.seq ?? open.nextSeq)
      if (threads.value[id] !== open) return false
      open.thread = keepUnchanged(toRaw(open.thread), folded)
      open.later = later
      open.firstSeq = page.firstSeq
      open.firstOffset = page.firstOffset
      open.pages = pages
      open.records = page.firstSeq > 0 || open.later ? markRaw(records) : null
      damaged(page.skippedLines)
      return true
    } catch (error) {
      notices.report(`Could not load the earlier part of the conversation: ${messageOf(error)}`)
      return false
    } finally {
      open.loadingEarlier = false
      if (waiting) release(id, waiting)
    }
  }

  /**
   * Loads the records after the last one shown, in a window that let go of
   * the conversation's end, and lets go of its first pages past
   * WINDOW_RECORDS; at the end, the thread follows what is appended again.
   * Resolves false when there is nothing later.
   */
  async function loadLater(id: string): Promise<boolean> {
    const open = threads.value[id]
    const later = open?.later
    if (!open || !later || open.loadingEarlier || open.loadingLater || loading.has(id)) return false
    open.loadingLater = true
    let waiting: Held[] | null = null
    try {
      const page = await host().request('transcripts.readLater', { id, from: later.seq, offset: later.offset, limit: PAGE_RECORDS })
      if (threads.value[id] !== open) return false
      let records = (open.records ?? []).concat(page.records)
      const pages = [...open.pages, { seq: later.seq, offset: later.offset, count: page.records.length }]
      while (records.length > WINDOW_RECORDS && pages.length > 1) {
        records = records.slice(pages[0].count)
        pages.shift()
      }
      waiting = hold(id)
      const folded = await foldInTasks(records, page.endSeq)
      if (threads.value[id] !== open) return false
      open.later = page.atEnd ? null : { seq: page.endSeq, offset: page.endOffset }
      // Back at the end: records appended from here on are applied as they come (those before are in this page).
      if (page.atEnd) open.nextSeq = page.endSeq
      open.thread = keepUnchanged(toRaw(open.thread), folded)
      open.firstSeq = pages[0].seq
      open.firstOffset = pages[0].offset
      open.pages = pages
      open.records = open.firstSeq > 0 || open.later ? markRaw(records) : null
      damaged(page.skippedLines)
      return true
    } catch (error) {
      notices.report(`Could not load the later part of the conversation: ${messageOf(error)}`)
      return false
    } finally {
      open.loadingLater = false
      if (waiting) release(id, waiting)
    }
  }

  /**
   * While a snapshot is on its way, or a window's fold runs (in tasks), the records that stream in for its session wait:
   * `release` applies them once the thread is shown (`apply`; or drops them), or leaves them to a load begun meanwhile,
   * which holds its own.
   */
  function hold(id: string): Held[] {
    const waiting: Held[] = []
    held.set(id, waiting)
    return waiting
  }

  function release(id: string, waiting: Held[], apply = true): void {
    if (held.get(id) !== waiting) return
    held.delete(id)
    if (apply) for (const item of waiting) applyRecords(id, item.seq, item.records)
  }

  function damaged(skippedLines: number): void {
    if (skippedLines > 0) {
      notices.report(
        `${skippedLines} damaged line${skippedLines === 1 ? '' : 's'} of this conversation could not be read and ${skippedLines === 1 ? 'was' : 'were'} skipped.`
      )
    }
  }

  function forget(id: string): void {
    delete threads.value[id]
    delete loadErrors.value[id]
  }

  return { threads, loadErrors, load, loaded, loadEarlier, loadLater, receiveRecords, flushRecords, catchUp, forget }
})
