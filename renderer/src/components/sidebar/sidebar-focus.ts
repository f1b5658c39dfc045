/**
 * The window's shortcut to the sidebar (Mod+Shift+E, App.vue) reaches the
 * list of projects through here: the list registers how it puts the focus on
 * its current row (it alone knows which rows are in the page).
 */
let handler: (() => Promise<boolean>) | null = null

/** Registers the list's handler; the returned function unregisters it. */
export function onFocusSidebar(focus: () => Promise<boolean>): () => void {
  handler = focus
  return () => {
    if (handler === focus) handler = null
  }
}

/** Puts the focus on the sidebar's current row; false when there is no row (no project yet). */
export async function focusSidebar(): Promise<boolean> {
  return handler ? handler() : false
}
