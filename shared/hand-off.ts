/** A conversation handed to another agent (sessions.handOff): what the window shows of it. */

/** What the user is shown of a hand-off's seed before it goes: its size, and what was left out of it. */
export interface HandOffSeedInfo {
  /** Characters of the conversation's text, and the budget it was kept within. */
  chars: number
  budget: number
  /** Sent as an embedded resource (the agent takes embedded context), else as plain text. */
  asResource: boolean
  images: number
  /** Sentences: what was left out (a long conversation's start, images, a diff cut short), or why it is smaller now. */
  notes: string[]
}
