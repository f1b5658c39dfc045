import { reactive } from 'vue'

/**
 * What the reader opened in the thread (a thought, a tool call's raw output,
 * a long diff), by entry id. The list is virtualised: an entry scrolled out
 * of view is unmounted, and coming back it shows as the reader left it.
 */
export const opened = reactive(new Map<string, string>())

/**
 * What a control of an entry said a moment ago ("Copied"), by entry id: the
 * entry may be drawn again (a new component) while the copy is under way, and
 * the new one says it.
 */
export const said = reactive(new Map<string, string>())
