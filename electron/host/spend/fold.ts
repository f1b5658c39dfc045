import type { TranscriptRecord, TurnUsage } from '../../../shared/transcript'

/**
 * What one session spent, read from its transcript records in order: the live
 * records as they are appended, and an older transcript read once (backfill)
 * go through this same fold, so both count alike.
 *
 * - **Cost** comes only from `usage_update`, whose `cost` is the session's
 *   cumulative total (ACP: "Total cumulative cost for session"). What a reading
 *   adds is its rise over the last reading in that currency; currencies are
 *   kept apart. A reading lower than the last one means the agent's own count
 *   started again: inside a turn that is a new process counting from zero
 *   (Claude Code counts per process), so all of it is new; outside a turn it is
 *   a replayed or stale reading (a `session/load` replays the history, usage
 *   updates included) and adds nothing.
 * - **Tokens** come only from the prompt responses' `usage` (kept in `stop`
 *   records), which is per turn, and are summed. `usage_update`'s `used` is
 *   how full the context is, not what was spent, and is not summed.
 * - A fork or a conversation continued in a new session starts its transcript
 *   with a copy of the other session's records: those are older than the
 *   session (`createdAt`) and are not its spend.
 */

export interface SpendFact {
  at: string
  /** The rise of a cumulative cost (`reading` is the agent's cumulative figure it came from). */
  cost?: { amount: number; currency: string; reading: number }
  tokens?: TurnUsage
}

export class SpendFold {
  private inTurn = false

  /**
   * `createdAt`: the session's start, when the records may begin with copies of another's (a new transcript);
   * `readings`: the last cumulative cost per currency counted so far (from spend.jsonl after a restart).
   */
  constructor(
    private readonly createdAt: string | null,
    private readonly readings = new Map<string, number>()
  ) {}

  take(record: TranscriptRecord): SpendFact | null {
    if (record.t === 'header' || (this.createdAt !== null && record.at < this.createdAt)) return null
    switch (record.t) {
      case 'prompt':
        this.inTurn = true
        return null
      case 'stop':
        this.inTurn = false
        return record.usage ? { at: record.at, tokens: record.usage } : null
      case 'error':
        // Older transcripts leave endsTurn out: their errors ended the turn.
        if (record.endsTurn !== false) this.inTurn = false
        return null
      case 'reset':
      case 'reconnected':
        // A load's replay, or a connection lost: no turn of this session runs on.
        this.inTurn = false
        return null
      case 'update':
        return record.update.sessionUpdate === 'usage_update' ? this.reading(record.at, record.update.cost) : null
      default:
        return null
    }
  }

  private reading(at: string, cost: { amount: number; currency: string } | null | undefined): SpendFact | null {
    if (!cost || typeof cost.amount !== 'number' || !Number.isFinite(cost.amount) || cost.amount < 0) return null
    const currency = currencyOf(cost.currency)
    if (!currency) return null
    const last = this.readings.get(currency)
    let amount: number
    if (last === undefined || cost.amount >= last) amount = cost.amount - (last ?? 0)
    else if (this.inTurn) amount = cost.amount
    else return null
    this.readings.set(currency, cost.amount)
    return amount > 0 ? { at, cost: { amount, currency, reading: cost.amount } } : null
  }
}

/** ISO 4217 codes in capitals ("usd" is USD); another unit ("credits") as the agent wrote it. */
export function currencyOf(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const trimmed = value.trim().slice(0, 40)
  if (!trimmed) return null
  return /^[a-z]{3}$/i.test(trimmed) ? trimmed.toUpperCase() : trimmed
}

/** The records the fold reads (what the live intake keeps while past transcripts are read). */
export function mattersToSpend(record: TranscriptRecord): boolean {
  switch (record.t) {
    case 'header':
    case 'prompt':
    case 'stop':
    case 'error':
    case 'reset':
    case 'reconnected':
      return true
    case 'update':
      return record.update.sessionUpdate === 'usage_update'
    default:
      return false
  }
}
