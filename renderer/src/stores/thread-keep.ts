import equal from 'fast-deep-equal/es6/index.js'
import type { TerminalView, Thread, ThreadEntry } from '../../../shared/thread'

/**
 * A long conversation's window folds its records again whenever it takes in
 * a page (earlier records can change the entries after them: a checkpoint
 * taken before a prompt, a tool call's first record). The fold is cheap (a
 * few ms for the 3,200 records a window holds); what was not is that every
 * entry came out a new object, so the view drew every row in the page again
 * for nothing. `keepUnchanged` gives the new fold the objects of the one it
 * replaces wherever an entry (or a terminal) came out the same, by id and by
 * content (fast-deep-equal): the view then sees those entries unchanged and
 * leaves their rows as they are. An entry the new records did change is the
 * new fold's, so the thread shown is always that fold.
 */
export function keepUnchanged(previous: Thread, next: Thread): Thread {
  const before = new Map<string, ThreadEntry>()
  for (const entry of previous.entries) before.set(entry.id, entry)
  const kept = new Map<ThreadEntry, ThreadEntry>()
  next.entries.forEach((entry, index) => {
    const old = before.get(entry.id)
    if (old && old !== entry && equal(old, entry)) {
      next.entries[index] = old
      kept.set(entry, old)
    }
  })
  // The fold finds entries by messageId or toolCallId too: those keys name the objects kept.
  if (kept.size)
    for (const [key, entry] of next.keyed) {
      const old = kept.get(entry)
      if (old) next.keyed.set(key, old)
    }
  for (const [id, terminal] of Object.entries(next.terminals)) {
    const old: TerminalView | undefined = previous.terminals[id]
    if (old && equal(old, terminal)) next.terminals[id] = old
  }
  return next
}
