import type { Component } from 'vue'
import type { TransportKind, TransportOf } from '../../../../../shared/transport'
import type { TransportFields } from './drafts'
import NetworkFacts from './NetworkFacts.vue'
import NetworkFields from './NetworkFields.vue'
import ProcessFacts from './ProcessFacts.vue'
import ProcessFields from './ProcessFields.vue'
import SshProjects from '../SshProjects.vue'
import SshFacts from './SshFacts.vue'
import SshFields from './SshFields.vue'

/**
 * The Agents page's part for each transport (shared/transport.ts): how the form's choice is worded, what the form
 * says of it, the component with its fields, and what the agent's details show of it (its facts, and a section
 * after them). The component takes `TransportFieldsProps`, keeps what is typed in
 * drafts (`useDraft`) and exposes `TransportFields` (its `transport()` in the request's shape). A new transport
 * is one more component here and its entry: the map is typed by `TransportKind`, so the compiler asks for the
 * entry, and checks that its component exposes the `transport()` of its kind.
 */
export interface TransportForm<K extends TransportKind> {
  /** The choice's words under "Runs". */
  choice: string
  /** The choice's test id. */
  testId: string
  /** What the form says first when this kind is chosen: text, with `backticks` around code. */
  intro: string
  /** Its fields: a component whose `transport()` gives this kind (checked by the compiler, as the entry is). */
  fields: Component & (abstract new (...args: never[]) => TransportFields<K>)
  /** Its lines in the agent's details list (`<dt>`/`<dd>` pairs): a component taking this kind's transport. */
  facts: Component & (abstract new (...args: never[]) => { $props: { transport: TransportOf<K>; agentId: string } })
  /** A section of the agent's details after the list, given the agent (the projects on an SSH agent's host). */
  section?: Component
}

export const TRANSPORT_FORMS: { readonly [K in TransportKind]: TransportForm<K> } = {
  process: {
    choice: 'On this computer',
    testId: 'agent-place-local',
    intro:
      'Any program that speaks the Agent Client Protocol over stdio. Switchboard starts it when a session needs it, in its working folder, with the variables below added to its environment.',
    fields: ProcessFields,
    facts: ProcessFacts
  },
  ssh: {
    choice: 'On another computer, over SSH',
    testId: 'agent-place-ssh',
    intro:
      "A program on another computer that speaks the Agent Client Protocol over stdio. Switchboard starts it there with your `ssh` (your keys, your `~/.ssh/config`), and its sessions' files and commands stay there: add the project folders it works in from its page.",
    fields: SshFields,
    facts: SshFacts,
    section: SshProjects
  },
  network: {
    choice: 'Over the network',
    testId: 'agent-place-remote',
    intro:
      "An agent served elsewhere that speaks the Agent Client Protocol over WebSocket or Streamable HTTP. Switchboard connects when a session needs it. Like an agent on this computer, it reads and writes files in its sessions' folders and runs commands here, through Switchboard.",
    fields: NetworkFields,
    facts: NetworkFacts
  }
}

/** The kinds in the order the form offers them. */
export const TRANSPORT_KINDS = Object.keys(TRANSPORT_FORMS) as TransportKind[]
