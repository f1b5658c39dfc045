import { watch, type ComputedRef, type InjectionKey, type Ref } from 'vue'
import type { SubagentEntry, TerminalView } from '../../../../shared/thread'

/** The open session's terminals, for tool call cards that show one. */
export const terminalsKey: InjectionKey<ComputedRef<Record<string, TerminalView>>> = Symbol('terminals')

/**
 * What clicking a file path in the thread does (a tool call's location, a
 * mentioned file): show it in the system's file manager where the shell can,
 * else copy the path. Resolves to a short word for the user ("Copied", ...).
 */
export type OpenPath = (path: string, line?: number | null) => Promise<string>
export const openPathKey: InjectionKey<OpenPath> = Symbol('openPath')

/** The open session's folder: paths inside it are shown relative to it. */
export const sessionRootKey: InjectionKey<ComputedRef<string>> = Symbol('sessionRoot')

/** The tool call a pending permission request is about, if any (its card says it waits for an answer). */
export const pendingToolCallKey: InjectionKey<ComputedRef<string | null>> = Symbol('pendingToolCall')

/** A path as shown in the thread: relative to the session's folder when inside it. */
export function displayPath(path: string, root: string): string {
  if (!root) return path
  const base = root.replace(/[\\/]+$/, '')
  if (path === base) return '.'
  if (path.startsWith(base + '/') || path.startsWith(base + '\\')) return path.slice(base.length + 1)
  return path
}

/** Asks to restore the session's files to a checkpoint (the user's message of that turn offers it). */
export const rewindKey: InjectionKey<(checkpoint: number) => void> = Symbol('rewind')

/** The open session, for "Edit and resend" on its messages: its id, and whether a turn runs (the resend waits for it to stop). */
export const editMessageKey: InjectionKey<{ sessionId: string; running: ComputedRef<boolean> }> = Symbol('editMessage')

/** The open session's subagents, by child session id: a tool call that launched one shows it nested. */
export const subagentsKey: InjectionKey<(sessionId: string) => SubagentEntry | undefined> = Symbol('subagents')

/**
 * Whether the reader is flinging through the thread (ThreadView): a row put in the page meanwhile is gone from the
 * view by the next frame, so its markdown shows as its text alone until the fling stops (MarkdownBlock).
 */
export const flingingKey: InjectionKey<Readonly<Ref<boolean>>> = Symbol('flinging')

/** Runs `then` once the fling a row was put in the page during stops (MarkdownBlock and DiffView draw it in full then). */
export function whenFlingStops(flinging: Readonly<Ref<boolean>> | null, then: () => void): void {
  const stop = watch(
    () => flinging?.value,
    (still) => {
      if (still) return
      stop()
      then()
    }
  )
}
