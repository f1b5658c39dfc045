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
 * `name` is the component's name (what a test stubs it by).
 */
export function lazyPart(
  loader: () => Promise<{ default: Component }>,
  what: string,
  options: { placement?: 'line' | 'fill' | 'overlay'; delay?: number; name?: string } = {}
): Component {
  // A chunk that cannot be fetched resolves to its failure, shown in place with Try again (not an error thrown into the window).
  const failed = (error: unknown): Component =>
    defineComponent(() => () => h(LazyState, { what, placement: options.placement, error: describe(error), onRetry: retry }))
  const make = (): Component =>
    defineAsyncComponent({
      loader: () =>
        loader().catch((error: unknown) => {
          console.error(`Could not load ${what}`, error)
          return failed(error)
        }),
      delay: options.delay ?? 120,
      loadingComponent: defineComponent(() => () => h(LazyState, { what, placement: options.placement }))
    })
  const part = shallowRef<Component>(make())
  let attempt = 0
  function retry(): void {
    attempt++
    part.value = make()
  }
  return defineComponent({
    name: options.name ?? 'LazyPart',
    inheritAttrs: false,
    setup(_props, { attrs, slots }) {
      return () => h(part.value, { ...attrs, key: attempt }, slots)
    }
  })
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
