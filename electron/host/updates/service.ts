import type { CommandChange } from '../../../shared/confirmation'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { SessionRecord, SessionState } from '../../../shared/domain'
import type { UpdateState } from '../../../shared/updates'
import type { EventBus } from '../contract/events'
import type { HandlerSlice, RequestContext } from '../contract/handlers'

/**
 * The `updates.*` requests. The desktop shell's updater (electron/updates.ts)
 * finds, downloads and checks an update; it tells the Host its state
 * (`note`), which every window hears (`updates.changed`). A window's yes comes
 * back here: the Host knows which sessions are mid-turn, and a restart that
 * would stop them is confirmed outside the window first (the confirmation
 * port, as for a change that runs a program). Only then is the shell asked to
 * install (`install`). Without a shell (`npm run serve`), updates are off.
 */

/** A session whose agent is mid-turn, as the confirmation names it. */
export interface TurnUnderWay {
  title: string
  agent: string
}

export interface UpdateServiceOptions {
  events: EventBus
  /** The sessions mid-turn now. */
  turnsUnderWay: () => TurnUnderWay[]
  /** Supplied by the desktop shell: install the downloaded update now (the app quits and restarts) or when it next quits. */
  install?: (when: 'restart' | 'quit') => Promise<void>
}

export class UpdateService {
  private state: UpdateState

  constructor(private readonly options: UpdateServiceOptions) {
    this.state = options.install ? { status: 'off', reason: 'no-feed' } : { status: 'off', reason: 'serve' }
  }

  /** What the shell's updater is doing now; every window is told. */
  note(state: UpdateState): void {
    this.state = state
    this.options.events.emit('updates.changed', state)
  }

  handlers(): HandlerSlice<'updates'> {
    return {
      'updates.get': async () => this.state,
      'updates.install': ({ when }, request) => this.install(when, request)
    }
  }

  private async install(when: 'restart' | 'quit', request: RequestContext): Promise<{ restarting: boolean }> {
    const { install } = this.options
    if (!install) throw new Error('This Switchboard does not update itself (updates come with the desktop app).')
    if (this.state.status !== 'ready') throw new Error('No update has been downloaded yet: there is nothing to install.')
    if (when === 'restart') {
      const turns = this.options.turnsUnderWay()
      if (turns.length > 0) await request.confirm(restartWhileInTurn(this.state.version, turns))
    }
    await install(when)
    if (when === 'quit') this.note({ ...this.state, installOnQuit: true })
    return { restarting: when === 'restart' }
  }
}

/** The sessions whose turn is running, named for the confirmation. */
export function turnsUnderWay(
  data: { readonly sessions: readonly SessionRecord[]; readonly agents: readonly AgentDefinition[] },
  states: SessionState[]
): TurnUnderWay[] {
  return states
    .filter((state) => state.status === 'running')
    .map((state) => {
      const record = data.sessions.find((s) => s.id === state.id)
      const agent = data.agents.find((a) => a.id === record?.agentId)
      return { title: record?.title ?? state.id, agent: agent?.name ?? record?.agentId ?? 'an agent' }
    })
}

/** What the user confirms when restarting would stop agents mid-turn. */
export function restartWhileInTurn(version: string, turns: TurnUnderWay[]): CommandChange {
  const count = turns.length === 1 ? 'an agent is' : `${turns.length} agents are`
  return {
    action: `Restart to update Switchboard to ${version} while ${count} mid-turn`,
    confirm: 'Stop and restart',
    programs: [],
    reach: turns.map((turn) => `“${turn.title}” (${turn.agent}) is mid-turn: its turn stops when Switchboard restarts.`),
    note: 'Cancel to let the turns end first; the update waits.'
  }
}
