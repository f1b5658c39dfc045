import type { TranscriptRecord } from '../../../shared/transcript'
import type { LivePhase } from './turn-phase'

/**
 * The replay of a `session/load` (the session's `replaying` phase). A session
 * whose conversation Switchboard recorded keeps that view (`keep`): its turn
 * ends, usage, checkpoints, rewind points and permission answers are
 * Switchboard's own and no agent's replay has them all (Gemini CLI's prefixes
 * context and grows duplicates), so the replayed conversation is not written
 * at all: the transcript does not grow with each reopen. Only a session with
 * no view of its own (imported from the agent's list) takes the replay as its
 * view. Then, until the load has answered, the replayed conversation is held
 * aside (`held`): a load that fails leaves the view as it was. Once it has
 * answered, the reset and what was held are written, and updates that still
 * come (Gemini CLI answers before it has finished replaying) are part of the
 * replay until it goes quiet. The reset is written only when a replayed
 * message actually comes. Either way the session state the replay carries
 * (modes, options, commands, usage) is taken.
 */

/** Writes a record to the session's transcript and view (SessionRegistry.append). */
type Append = (record: TranscriptRecord) => void

/** Updates that are the conversation itself (a replay of them replaces the view); the rest is session state. */
const CONVERSATION_UPDATES = new Set([
  'user_message_chunk',
  'agent_message_chunk',
  'agent_thought_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
  'session_message',
  'session_message_chunk'
])

/** A `session/load` is about to be sent: its replay is held until it answers, or dropped when the view is kept. */
export function beginReplay(phase: LivePhase, keep: boolean): void {
  phase.move({ type: 'replay', replay: { keep, dropped: 0, held: keep ? null : [], resetWritten: false, lastAt: Date.now() } })
}

/**
 * The load answered: what was replayed so far replaces the view; later replayed updates follow it. The replay's
 * quiet is counted from here. Says whether any replayed update had come before the answer (an agent that replays,
 * then answers); none: the agent may answer first and replay after (Gemini CLI).
 */
export function commitReplay(phase: LivePhase, append: Append): boolean {
  const replay = phase.replay
  if (!replay) return false
  const early = replay.dropped > 0 || (replay.held?.length ?? 0) > 0
  replay.lastAt = Date.now()
  if (replay.keep || !replay.held) return early
  const held = replay.held
  replay.held = null
  for (const record of held) writeReplayed(phase, append, record)
  return early
}

/** The load failed (or the replay is over): nothing held is written; the view stays as it was. */
export function endReplay(phase: LivePhase): void {
  if (phase.replay) phase.move({ type: 'replayEnded' })
}

/**
 * Waits until no replayed update has come for `quietMs` (at most `maxMs`):
 * the next prompt is recorded after the whole replay, not in the middle of it.
 */
export async function replayQuiet(phase: LivePhase, quietMs: number, maxMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + maxMs
  for (;;) {
    const replay = phase.replay
    if (!replay || signal?.aborted) return
    const wait = replay.lastAt + quietMs - Date.now()
    if (wait <= 0 || Date.now() >= deadline) return
    await new Promise((r) => setTimeout(r, Math.min(wait, deadline - Date.now())))
  }
}

/** An agent's update for the session: through the replay under way, if any, else straight to the transcript. */
export function appendFromAgent(phase: LivePhase, append: Append, record: TranscriptRecord): void {
  const replay = phase.replay
  const conversation = record.t === 'terminal' || (record.t === 'update' && CONVERSATION_UPDATES.has(record.update.sessionUpdate))
  if (!replay || !conversation) {
    append(record)
    return
  }
  replay.lastAt = Date.now()
  if (replay.keep) replay.dropped += 1
  else if (replay.held) replay.held.push(record)
  else writeReplayed(phase, append, record)
}

function writeReplayed(phase: LivePhase, append: Append, record: TranscriptRecord): void {
  const replay = phase.replay
  if (replay && !replay.resetWritten) {
    replay.resetWritten = true
    append({ t: 'reset', at: new Date().toISOString(), reason: 'load' })
  }
  append(record)
}
