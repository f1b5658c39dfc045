/**
 * How a turn ended, in words: the protocol's `stopReason` is never shown as
 * it is ("end_turn"). The same words in the thread's turn-end line, the
 * sidebar, the inbox and notifications.
 */

/** Why Switchboard ended a turn itself, when it stopped the agent (the app closing, the agent restarted). */
export const STOPPED_BY_SWITCHBOARD = 'Interrupted: Switchboard stopped the agent'

/** "Finished", "Cancelled", "Stopped: token limit", "Stopped: turn limit", "Refused"; a reason the protocol does not name is quoted. */
export function stopReasonWords(stopReason: string): string {
  switch (stopReason) {
    case 'end_turn':
      return 'Finished'
    case 'cancelled':
      return 'Cancelled'
    case 'max_tokens':
      return 'Stopped: token limit'
    case 'max_turn_requests':
      return 'Stopped: turn limit'
    case 'refusal':
      return 'Refused'
    default:
      return `Stopped: ${stopReason.replace(/_/g, ' ')}`
  }
}

/** A sentence for a turn's end where there is room (the inbox): what it means for the user. */
export function stopReasonSentence(stopReason: string): string {
  switch (stopReason) {
    case 'end_turn':
      return 'Finished: its answer is waiting for you.'
    case 'cancelled':
      return 'Cancelled.'
    case 'max_tokens':
      return 'Stopped: it reached its token limit.'
    case 'max_turn_requests':
      return 'Stopped: it made the most requests one turn may make.'
    case 'refusal':
      return 'Refused the prompt.'
    default:
      return `${stopReasonWords(stopReason)}.`
  }
}
