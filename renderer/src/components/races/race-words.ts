import type { RaceRow } from '../../../../shared/race'

/** A length of time as read at a glance: 12 s, 3 min 05 s, 1 h 02 min. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`
}

/** A racer's state in a word or two. */
export function stateWords(row: Pick<RaceRow, 'state' | 'stopReason'>): string {
  switch (row.state) {
    case 'starting':
      return 'Starting'
    case 'running':
      return 'Running'
    case 'failed':
      return 'Failed'
    default:
      return row.stopReason && row.stopReason !== 'end_turn' ? `Done (${row.stopReason.replace(/_/g, ' ')})` : 'Done'
  }
}
