import type { PermissionOption } from '@agentclientprotocol/sdk'
import type { TranscriptRecord } from '../../../shared/transcript'

/**
 * Remembered permission answers. An "always" answer (allow_always,
 * reject_always) becomes a rule for one agent, one project and one kind of
 * tool; later requests that match are answered with the option of the same
 * decision the agent offers, and the thread says so.
 */

export type Decision = 'allow' | 'reject'

export function alwaysDecision(kind: string): Decision | null {
  if (kind === 'allow_always') return 'allow'
  if (kind === 'reject_always') return 'reject'
  return null
}

/** The option that carries out a remembered decision: the "always" one if offered, else the "once" one. */
export function optionFor(options: PermissionOption[], decision: Decision): PermissionOption | undefined {
  return options.find((o) => o.kind === `${decision}_always`) ?? options.find((o) => o.kind === `${decision}_once`)
}

export function permissionRecord(title: string, option: PermissionOption | null, remembered: boolean): TranscriptRecord {
  return {
    t: 'permission',
    at: new Date().toISOString(),
    title,
    optionId: option?.optionId ?? null,
    optionName: option?.name,
    optionKind: option?.kind,
    remembered
  }
}
