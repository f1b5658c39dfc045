import { defineAsyncComponent, defineComponent, h, ref, shallowRef, watch, type Component, type Ref } from 'vue'
import LazyState from './components/common/LazyState.vue'

/**
 * A part of the window that is not on the first screen (a page, the terminal,
 * a diff, the search palette, a session's view): its code is a chunk of its
 * own (Vite splits at each dynamic `import()`), fetched the first time the
 * part is shown, so the window's first script stays small. While the chunk
 * loads, a small loading state takes its place (after `delay` ms, so a fast
 * load does not flash); if it cannot be fetched, the part says so with a
 * "Try again" that fetches it anew. Props, attributes, listeners and slots
 * pass through to the part.
 *
 * A thread's rows fetch theirs (the diff, the terminal) before one is shown,
 * once the thread holds a row that needs it (components/thread/row-parts.ts).
 *
 * `what` names it for the user ("the terminal"); `placement` is where its
 * states stand: `fill` takes the whole place of a page or pane, `overlay`
 * floats (for a dialog), `line` (the default) is one line in the flow;
 * `name` is the component's name (what a test stubs it by); `whenIdle`: a
 * part most windows show soon (a session's view) is fetched ahead, when the
 * window is first idle after its start (`fetchPartsWhenIdle`), so showing
 * it first waits for no fetch nor compile.
 */
export function lazyPart(
  loader: () => Promise<{ default: Component }>,
  what: string,
  options: { placement?: 'line' | 'fill' | 'overlay'; delay?: number; name?: string; whenIdle?: boolean } = {}
): Component {
  /** The part once its chunk is in (fetched ahead, or shown before): drawn at once, with no wait for a promise. */
  let loaded: Component | null = null
  const load = (from = loader): Promise<{ default: Component }> =>
    from().then((module) => {
      loaded = module.default
      return module
    })
  if (options.whenIdle) fetchAhead(load)
  // A chunk that cannot be fetched resolves to its failure, shown in place with Try again (not an error thrown into the window).
  const failed = (error: unknown): Component =>
    defineComponent(() => () => h(LazyState, { what, placement: options.placement, error: describe(error), onRetry: retry }))
  const make = (): Component =>
    defineAsyncComponent({
      loader: () =>
        (attempt === 0 ? load() : load().catch(fetchedAnew)).catch((error: unknown) => {
          console.error(`Could not load ${what}`, error)
          return failed(error)
        }),
      delay: options.delay ?? 120,
      loadingComponent: defineComponent(() => () => h(LazyState, { what, placement: options.placement }))
    })
  let attempt = 0
  /**
   * Try again, where the browser keeps a module that failed to fetch as failed (Chromium 150 does; 156 fetches it
   * anew): the chunk the error names, fetched at an address of its own (the same file: a query, which the app
   * scheme and every server here ignore). Its imports are the window's own modules, not fetched again.
   */
  const fetchedAnew = (error: unknown): Promise<{ default: Component }> => {
    const chunk = /\b(?:https?|app):\/\/\S+?\.js\b/.exec(error instanceof Error ? error.message : String(error))?.[0]
    if (!chunk || new URL(chunk).origin !== location.origin) return Promise.reject(error)
    return load(() => import(/* @vite-ignore */ `${chunk}?attempt=${attempt}`) as Promise<{ default: Component }>)
  }
  const part = shallowRef<Component>(make())
  function retry(): void {
    attempt++
    part.value = make()
  }
  return defineComponent({
    name: options.name ?? 'LazyPart',
    inheritAttrs: false,
    setup(_props, { attrs, slots }) {
      // Its chunk in already: the part itself, drawn in the render that shows it. An async component waits for
      // its loader's promise even then (an `import()` of a module run before settles a task later): a session's
      // view opened at a click was drawn only after that task, often after the Host's answer had been handled,
      // its mount then adding to the wait instead of running while the Host answered. Chosen once: the same
      // instance never changes from one to the other (that would mount it anew).
      const ready = loaded
      return () => h(ready ?? part.value, { ...attrs, key: attempt }, slots)
    }
  })
}

/** The loaders of the parts fetched ahead (`whenIdle`); a module once fetched is kept, so a later `import()` of it is at once. */
const fetchedWhenIdle: (() => Promise<unknown>)[] = []
/** The idle fetch has begun: a part made since (in a chunk it fetched: the diff, in a session's view's) is fetched at once. */
let fetchingAhead = false

function fetchAhead(loader: () => Promise<unknown>): void {
  if (fetchingAhead) loader().catch(() => undefined)
  else fetchedWhenIdle.push(loader)
}

/**
 * After the window's start (its first load in, its first frame painted): the parts marked `whenIdle` are fetched
 * (and their code compiled and run) when the browser is next idle, all at once (and those the fetched chunks make,
 * as they are run), so the start is not slowed and the first session opened is not waiting for them. One that
 * cannot be fetched is left: it says so where it is shown, as before.
 */
export function fetchPartsWhenIdle(): void {
  whenIdleAfterFrame(() => {
    fetchingAhead = true
    for (const loader of fetchedWhenIdle.splice(0)) fetchAhead(loader)
  })
}

/** `run` when the browser is next idle after its next frame (after the window's start: once its first frame is painted). */
export function whenIdleAfterFrame(run: () => void): void {
  requestAnimationFrame(() => whenIdle(run))
}

/** `run` when the browser is next idle (at the latest after 2 s), or after 200 ms where it cannot say. */
export function whenIdle(run: () => void): number {
  return typeof requestIdleCallback === 'function' ? requestIdleCallback(run, { timeout: 2000 }) : window.setTimeout(run, 200)
}

export function cancelIdle(handle: number): void {
  if (typeof cancelIdleCallback === 'function') cancelIdleCallback(handle)
  else window.clearTimeout(handle)
}

/** True from the first time `source` is truthy on: a lazy dialog is mounted when first needed, then kept. */
export function shownOnce(source: () => unknown): Ref<boolean> {
  const shown = ref(Boolean(source()))
  const stop = watch(source, (value) => {
    if (!value) return
    shown.value = true
    stop()
  })
  return shown
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.length > 200 ? `${message.slice(0, 200)}…` : message
}
