/** What an agent asks the user to fill in or open (`elicitation/create`): its form's fields and the pending question. */

/** One field of a form an agent asks the user to fill in (`elicitation/create`, form mode). */
export interface ElicitationField {
  name: string
  title: string
  description?: string
  /** `select`: one of `options`; `multiselect`: several of them. */
  type: 'string' | 'number' | 'integer' | 'boolean' | 'select' | 'multiselect'
  required: boolean
  default?: string | number | boolean | string[]
  options?: { value: string; label: string }[]
  format?: 'email' | 'uri' | 'date' | 'date-time'
  minLength?: number
  maxLength?: number
  pattern?: string
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
}

export type ElicitationValue = string | number | boolean | string[]

/** A question an agent is waiting for the user to answer (`elicitation/create`). */
export interface PendingElicitation {
  requestId: string
  agentId: string
  /** The Switchboard session it belongs to; null when the agent asks outside a session (e.g. while signing in). */
  sessionId: string | null
  message: string
  mode: 'form' | 'url'
  title?: string
  fields: ElicitationField[]
  /** url mode: the page the agent wants the user to open. */
  url?: string
}
