import type { HostEvent } from '../../../shared/contract'
import type { SessionRecord } from '../../../shared/domain'
import type { TranscriptRecord } from '../../../shared/transcript'
import { stopReasonWords } from '../../../shared/stop-reasons'
import { linkToHost } from './connect'
import { CliError, EXIT, exitCodeOf } from './exit-codes'
import { HostRefusal, type HostLink } from './link'
import { jsonOutput, plainOutput, type Streams } from './output'
import { checkSecretsWithoutApp } from './keychain'
import { answerPermissions, type AllowPolicy } from './permissions'
import { findAgent, findPreset, findSession, projectFor, type ProjectAdder } from './resolve'
import { askPermission } from './terminal'

/**
 * `switchboard run`: one turn without a window, through the Host on the data
 * folder (the running one, or one opened here), in an ordinary session:
 * listed, searchable, its spend counted, in the inbox when it failed. The
 * reply streams as it comes; the exit code says how the turn ended.
 */
export interface RunRequest {
  dataDir: string
  prompt: string
  /** A new session with this agent (id or name) or preset, in `project` (an absolute, existing folder)… */
  agent?: string
  preset?: string
  project: string
  /** …or the next turn of this session. */
  continueId?: string
  json: boolean
  allow: AllowPolicy
}

export async function runTurn(run: RunRequest, streams: Streams, adder: ProjectAdder): Promise<number> {
  const link = await linkToHost({ dataDir: run.dataDir, confirmCommand: adder.confirmCommand })
  try {
    const session = await sessionFor(link, run, adder)
    streams.err(`Session ${session.id}; go on with: switchboard run --continue ${session.id} "…"\n`)
    // An MCP server the session was not given is said, as the window says it: never a run that quietly lacks a tool.
    // Without the app its secrets are locked in the keychain (see keychain.ts), which is the usual reason here.
    const unlockHint = link.via === 'in-process' ? ' (with Switchboard running, the command goes through it, and it can unlock secrets)' : ''
    for (const server of session.mcpLeftOut ?? [])
      streams.err(`switchboard: the MCP server ${server.name} was left out: ${server.reason}${unlockHint}\n`)
    return await promptOnce(link, session.id, run, streams)
  } finally {
    await link.close()
  }
}

async function sessionFor(link: HostLink, run: RunRequest, adder: ProjectAdder): Promise<SessionRecord> {
  // What is named is found first, and the agent's secrets checked, before anything is written (a project added).
  const session = run.continueId ? await findSession(link, run.continueId) : undefined
  const preset = run.preset ? await findPreset(link, run.preset) : undefined
  const agent = await findAgent(link, session?.agentId ?? preset?.agentId ?? run.agent ?? '')
  if (link.via === 'in-process') await checkSecretsWithoutApp(agent, run.dataDir)
  if (session) return session
  const project = await projectFor(link, run.project, adder)
  if (preset) return link.request('presets.start', { presetId: preset.id, projectId: project.id })
  return link.request('sessions.new', { projectId: project.id, agentId: agent.id })
}

async function promptOnce(link: HostLink, id: string, run: RunRequest, streams: Streams): Promise<number> {
  const output = run.json ? jsonOutput(streams) : plainOutput(streams)
  const note = (line: string): void => streams.err(`${line}\n`)
  // Records are shown in order, each once: live batches from `shown` on, then whatever came after the answer.
  let shown = Number.POSITIVE_INFINITY
  const early: { seq: number; records: TranscriptRecord[] }[] = []
  const show = (seq: number, records: TranscriptRecord[]): void => {
    records.forEach((record, index) => {
      if (seq + index < shown) return
      output.record(seq + index, record)
      shown = seq + index + 1
    })
  }
  const unsubscribe = link.subscribe((events: HostEvent[]) => {
    for (const event of events) {
      if (event.type !== 'session.records' || event.payload.id !== id) continue
      if (shown === Number.POSITIVE_INFINITY) early.push(event.payload)
      else show(event.payload.seq, event.payload.records)
    }
  })
  const answerer = answerPermissions(link, id, run.allow, { ask: askPermission, note })
  let cancels = 0
  const onInterrupt = (): void => {
    if (++cancels > 1) process.exit(130)
    note('switchboard: cancelling the turn (Ctrl-C again to leave at once)')
    link.request('sessions.cancel', { id }).catch((error: Error) => note(`switchboard: could not cancel: ${error.message}`))
  }
  process.on('SIGINT', onInterrupt)
  try {
    shown = (await link.request('sessions.open', { id, tail: 1 })).nextSeq
    for (const batch of early.splice(0)) show(batch.seq, batch.records)
    let stopReason: string
    try {
      stopReason = (await link.request('sessions.prompt', { id, text: run.prompt, rulesApply: run.allow !== 'never' })).stopReason
    } catch (error) {
      await catchUp(link, id, show)
      output.end()
      if (error instanceof HostRefusal) throw new CliError(error.message, EXIT.failed)
      throw error
    }
    await catchUp(link, id, show)
    output.end()
    const code = exitCodeOf(stopReason, answerer.denied)
    if (code !== EXIT.ok) note(`switchboard: ${stopReasonWords(stopReason)}${code === EXIT.denied ? ' (a permission was denied)' : ''}`)
    return code
  } finally {
    process.off('SIGINT', onInterrupt)
    answerer.stop()
    unsubscribe()
  }
}

/** The records written after the last batch that arrived (the turn's end may come after its answer). */
async function catchUp(link: HostLink, id: string, show: (seq: number, records: TranscriptRecord[]) => void): Promise<void> {
  const snapshot = await link.request('sessions.open', { id, tail: 1 })
  show(snapshot.firstSeq, snapshot.records)
}
