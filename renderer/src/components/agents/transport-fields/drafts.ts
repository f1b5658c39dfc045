import { inject, provide, reactive, type InjectionKey } from 'vue'
import type { TransportInput } from '../../../../../shared/agent-requests'
import type { AgentTransport } from '../../../../../shared/transport'

/**
 * What the user typed in an agent form's transport parts, kept by the form while it is open whichever kind is
 * chosen: each piece of it (the command block, the SSH host, the network address) is a draft by name, started
 * from the agent being edited the first time a part shows it. Parts unmount when another kind is chosen and find
 * their draft again when they come back; two parts that show the same piece (the command block, under "this
 * computer" and over SSH) share it, so a command typed for one is there for the other.
 */

/** A piece of the form's state: its name, and how it starts from the agent being edited (any kind; null: a new agent). */
export interface DraftPiece<T extends object> {
  readonly name: string
  start(from: AgentTransport | null): T
}

interface Drafts {
  from: AgentTransport | null
  pieces: Map<string, object>
}

const DRAFTS: InjectionKey<Drafts> = Symbol('agent form drafts')

/** Called by the form: its parts' drafts, started from `from` (the agent being edited's transport). */
export function provideDrafts(from: AgentTransport | null): void {
  provide(DRAFTS, { from, pieces: new Map() })
}

/** The piece's draft in the form around this part (reactive: fields bind to it with v-model). */
export function useDraft<T extends object>(piece: DraftPiece<T>): T {
  const drafts = inject(DRAFTS, null)
  if (!drafts) throw new Error(`The ${piece.name} fields are used outside an agent form (no provideDrafts)`)
  let draft = drafts.pieces.get(piece.name)
  if (!draft) {
    draft = reactive(piece.start(drafts.from))
    drafts.pieces.set(piece.name, draft)
  }
  return draft as T
}

/** The props every transport part takes. */
export interface TransportFieldsProps {
  /** An agent being edited (a new agent's form also takes a command line pasted whole). */
  editing: boolean
}

/** What every transport part exposes to the form: the transport as typed, in the request's shape. */
export interface TransportFields<K extends TransportInput['kind'] = TransportInput['kind']> {
  /** Throws a sentence for the form when a field is not complete. */
  transport(): Extract<TransportInput, { kind: K }>
}
