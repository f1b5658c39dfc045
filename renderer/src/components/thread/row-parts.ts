import { createVNode, defineComponent, onBeforeUnmount, toRaw, watch, type Component, type Ref } from 'vue'
import type { ThreadEntry } from '../../../../shared/thread'
import { cancelIdle, lazyPart, whenIdle } from '../../lazy'

/**
 * The parts of a thread's rows whose code is a chunk of its own (lazy.ts): the
 * diff view (jsdiff) and the terminal (xterm.js). Each is fetched the first
 * time a row shows one, or before: once a thread whose rows need it is shown
 * (`preloadRowParts`), so a row scrolled into view later is drawn at once at
 * its final height, not empty, then "loading", then whole (a height change
 * each, the list's measurements and the reader's place jumping under them).
 */
interface RowPart {
  component: Component
  /** Fetches the part's chunk now (a no-op once it is in); one that cannot be fetched says so where it is shown. */
  preload(): void
}

function rowPart(loader: () => Promise<{ default: Component }>, what: string, name: string, fetchWhenIdle = false): RowPart {
  // The part's component once its chunk is in: a part made after that draws it in its first render, at its height.
  let ready: Component | null = null
  const load = (): Promise<{ default: Component }> => loader().then((module) => ((ready = module.default), module))
  const lazy = lazyPart(load, what, { name, whenIdle: fetchWhenIdle })
  const component = defineComponent({
    name,
    inheritAttrs: false,
    setup(_props, { attrs, slots }) {
      // Chosen once: a part shown while its chunk loads stays lazy's (which shows it once in), not drawn anew.
      const shown = ready ?? lazy
      // h() is createVNode with its arguments sorted; here it would be one more name the window's first script exports.
      return () => createVNode(shown, attrs, slots)
    }
  })
  return {
    component,
    preload() {
      if (!ready) load().catch(() => undefined)
    }
  }
}

// The diff (small, and in most conversations) is fetched when the window is first idle too: a conversation's first open draws its edits at once.
const diff = rowPart(() => import('./DiffView.vue'), 'the diff', 'DiffView', true)
const terminal = rowPart(() => import('./TerminalOutput.vue'), 'the terminal', 'TerminalOutput')
export const DiffView = diff.component
export const TerminalOutput = terminal.component
const ALL = [diff, terminal]

/** The parts `entry` shows (a tool call's diffs and terminals). */
function partsOf(entry: ThreadEntry | undefined, into: Set<RowPart>): void {
  if (entry?.kind !== 'tool_call') return
  for (const item of entry.content) {
    if (item.type === 'diff') into.add(diff)
    else if (item.type === 'terminal') into.add(terminal)
  }
}

/**
 * Fetches the row parts the thread's entries need once the thread is shown:
 * when the browser is next idle after its first paint (so the open is not
 * slowed), or at the reader's first fling if that comes first; a fling fetches
 * the diff in any case, as the pages it reaches may hold edits the window does
 * not. The entries are looked at once each: those added to the list since the
 * last look, or all of a list replaced (a page taken in folds it anew; the
 * window holds a few pages, not the conversation). Stops once every part is in.
 */
export function preloadRowParts(entries: () => readonly ThreadEntry[], flinging: Readonly<Ref<boolean>>): void {
  const wanted = new Set<RowPart>()
  const done = new Set<RowPart>()
  let list: readonly ThreadEntry[] | null = null
  let looked = 0
  let idle: number | null = null
  const fetchWanted = (): void => {
    if (idle !== null) cancelIdle(idle)
    idle = null
    for (const part of wanted) {
      if (done.has(part)) continue
      done.add(part)
      part.preload()
    }
    if (ALL.every((part) => done.has(part))) stop()
  }
  const stopEntries = watch(
    () => [toRaw(entries()), entries().length] as const,
    ([now, count]) => {
      if (now !== list) [list, looked] = [now, 0]
      for (; looked < count; looked++) partsOf(now[looked], wanted)
      if (idle === null && [...wanted].some((part) => !done.has(part))) idle = whenIdle(fetchWanted)
    },
    { immediate: true }
  )
  const stopFling = watch(flinging, (now) => {
    if (!now) return
    wanted.add(diff)
    fetchWanted()
  })
  function stop(): void {
    stopEntries()
    stopFling()
  }
  onBeforeUnmount(() => {
    if (idle !== null) cancelIdle(idle)
    stop()
  })
}
