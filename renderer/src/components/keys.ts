import type { ComputedRef, InjectionKey } from 'vue'
import type { TerminalView } from '../../../shared/thread'

/** The open session's terminals, for tool call cards that show one. */
export const terminalsKey: InjectionKey<ComputedRef<Record<string, TerminalView>>> = Symbol('terminals')
