import { createWriteStream, type WriteStream } from 'node:fs'
import { homedir } from 'node:os'
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { SshTransport } from '../../../shared/transport'
import { newProcessMark } from '../child-processes/process-tree'
import { SSH_FAILED, SSH_NOT_FOUND, SshEndpoint } from '../ssh/endpoint'
import { SshMaster } from '../ssh/master'
import type { SshHosts, SshSettings } from '../ssh/options'
import { lifelineScript, NO_FOLDER_LINE } from '../ssh/script'
import { agentLogPath, type AgentLink, type LinkOptions, type ProcessDiagnostics, type RunOptions } from './link'
import { AgentRun } from './process'
import { PRIVATE_FILE_MODE, privateFolderSync } from '../storage/private-files'

/**
 * An agent on another host, over SSH: one shared connection to the host
 * (SshMaster: `ssh -M -N`, keep-alive messages), then the agent's command
 * started there through that connection by an `ssh` whose stdio is the ACP
 * stream (an AgentRun: the same stdout guard, stderr log and stop as a local
 * agent). File requests and terminals of its sessions ride the same
 * connection (`endpoint`). The command is wrapped (ssh/script.ts) so it ends
 * when its stdin closes, which is what the host sees when the connection
 * drops or Switchboard stops it; its variables and secrets travel on stdin,
 * never on a command line there. Messages the SDK writes while the
 * connection opens wait in the link's own stream. A link is never reused.
 */

export interface SshLinkOptions {
  hosts: SshHosts
  settings: SshSettings
  /** The agent's variables and secrets, for its environment on the host. */
  remoteEnv: Record<string, string>
}

/** The link of an agent whose transport is SSH: the Host's SSH settings, and its variables and secrets for the host. */
export function sshLink(definition: AgentDefinition, transport: SshTransport, options: LinkOptions): AgentLink {
  if (!options.ssh) throw new Error("An agent over SSH needs the Host's SSH settings")
  return new SshLink(definition, transport, options, { ...options.ssh, remoteEnv: { ...transport.env, ...options.secretEnv } })
}

export class SshLink implements AgentLink {
  readonly stream: Stream
  /** A connection that cannot be made ends the link too, with what ssh said. */
  readonly exited: Promise<never>
  readonly closed: Promise<void>
  /** The way to the host for file requests and terminals, on this link's connection. */
  readonly endpoint: SshEndpoint
  stopping = false
  private run: AgentRun | null = null
  private readonly master: SshMaster
  /** Why the connection could not be made (the link ended before the agent started). */
  private unreachable: string | null = null
  private ownFailure: string | null = null
  private lost = false
  private put = false
  /** The mark of the agent's processes on the host (see ssh/script.ts). */
  private readonly remoteMark: string
  private readonly startedAt = Date.now()
  private log: WriteStream | null
  private rejectExited!: (error: Error) => void
  private resolveClosed!: () => void

  constructor(
    private readonly definition: Pick<AgentDefinition, 'id' | 'name' | 'installHint'>,
    private readonly transport: SshTransport,
    private readonly options: RunOptions,
    private readonly ssh: SshLinkOptions
  ) {
    const target = transport
    this.exited = new Promise<never>((_, reject) => (this.rejectExited = reject))
    this.exited.catch(() => undefined)
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve))
    privateFolderSync(options.logDir)
    this.log = createWriteStream(agentLogPath(options.logDir, options.logName ?? definition.id), { flags: 'a', mode: PRIVATE_FILE_MODE })
    this.log.on('error', () => undefined)
    this.remoteMark = newProcessMark(options.markPrefix)
    this.endpoint = new SshEndpoint(target, {
      settings: ssh.settings,
      env: options.env,
      controlPath: ssh.hosts.nextSocket(),
      markPrefix: options.markPrefix
    })
    this.writeLog(`\n--- ${new Date().toISOString()} connecting to ${this.endpoint.host} over SSH\n`)
    this.master = new SshMaster(this.endpoint, (text) => this.writeLog(text))
    const toAgent = new TransformStream<AnyMessage, AnyMessage>()
    const fromAgent = new TransformStream<AnyMessage, AnyMessage>()
    this.stream = { readable: fromAgent.readable, writable: toAgent.writable }
    this.master.ready.then(
      () => {
        if (this.stopping) return this.endUnstarted('closed by Switchboard', fromAgent)
        this.writeLog('--- connected\n')
        const run = (this.run = new AgentRun(definition, transport, options, this.launch()))
        run.putAway = this.put
        void toAgent.readable.pipeTo(run.stream.writable).catch(() => undefined)
        void run.stream.readable.pipeTo(fromAgent.writable).catch(() => undefined)
        run.exited.catch((error: Error) => this.rejectExited(error))
        // The agent's ssh ended: the connection goes with it (and ends it, when it is what failed).
        void run.closed.then(async () => {
          await this.master.stop()
          this.finish()
        })
        void this.master.ended.then(() => {
          if (!this.master.stopping && !this.stopping && !this.put) this.loseConnection()
        })
      },
      (error: Error) => this.endUnstarted(error.message, fromAgent)
    )
  }

  get lastActivity(): number {
    return this.run?.lastActivity ?? this.startedAt
  }

  get ended(): boolean {
    return this.unreachable !== null || (this.run?.ended ?? false)
  }

  get sshHost(): SshEndpoint {
    return this.endpoint
  }

  /** The stderr of the agent's command there (through its ssh); nothing before it starts. The pid is ssh's, not the agent's: none is told. */
  get diagnostics(): ProcessDiagnostics {
    const run = this.run
    return {
      pid: undefined,
      spawnFailed: run?.spawnFailed ?? false,
      commandNotFound: run?.commandNotFound ?? false,
      stderrMark: () => run?.stderrMark() ?? 0,
      stderrSince: (mark) => run?.stderrSince(mark) ?? '',
      explanation: (mark) => run?.explanation(mark) ?? { lines: [], found: false },
      stderrQuiet: async () => await run?.stderrQuiet()
    }
  }

  get putAway(): boolean {
    return this.put
  }

  set putAway(value: boolean) {
    this.put = value
    if (this.run) this.run.putAway = value
  }

  get failure(): string | null {
    return this.ownFailure ?? this.run?.failure ?? null
  }

  /** The link ended because the connection to the host was lost (not closed by Switchboard). */
  get connectionLost(): boolean {
    return this.lost
  }

  exitMessage(): string {
    if (this.unreachable !== null) return this.failure ?? this.exitSummary()
    return this.run?.exitMessage() ?? this.failure ?? `Agent '${this.definition.name}' is connecting to ${this.endpoint.host}`
  }

  exitSummary(): string {
    if (this.unreachable !== null) return `Agent '${this.definition.name}' could not connect to ${this.endpoint.host} over SSH: ${this.unreachable}`
    return this.run?.exitSummary() ?? `Agent '${this.definition.name}' is not running`
  }

  async flushLog(): Promise<void> {
    await this.run?.flushLog()
    const log = this.log
    if (log && !log.writableEnded && !log.destroyed) await new Promise<void>((resolve) => log.write('', () => resolve()))
  }

  /** Stops the agent (its stdin closed: the host's side ends it), then the connection. */
  async stop(): Promise<void> {
    this.stopping = true
    if (this.run) await this.run.stop()
    await this.master.stop()
    await this.master.ready.catch(() => undefined)
    await this.closed
  }

  async abandon(message: string): Promise<void> {
    if (this.run) return this.run.abandon(message)
    if (this.failure || this.stopping) return
    this.ownFailure = message
    this.options.setState({ status: 'error', message })
    this.options.closeStream(new Error(message))
    await this.stop()
  }

  /** The agent's command on the host, through the connection: ssh's own run, with the wrapper's script first on stdin. */
  private launch() {
    const { transport: def, endpoint } = this
    const script = lifelineScript({
      cwd: def.cwd,
      env: this.ssh.remoteEnv,
      command: { argv: [def.command, ...def.args] },
      mark: this.remoteMark,
      stdin: 'stream',
      leftovers: this.ssh.hosts.takeLeftBehind(endpoint.host)
    })
    return {
      command: 'ssh',
      args: endpoint.argsFor('agent'),
      cwd: homedir(),
      preamble: `${script}\n`,
      describe: `${def.command} ${def.args.join(' ')} on ${endpoint.host} over SSH`,
      notFound: SSH_NOT_FOUND,
      describeExit: (exit: { code: number | null; signal: NodeJS.Signals | null }) => this.describeExit(exit)
    }
  }

  /** How the agent's ssh ended: the connection lost, the command missing there, its folder missing, or the command's own exit. */
  private async describeExit({ code, signal }: { code: number | null; signal: NodeJS.Signals | null }): Promise<string | undefined> {
    const { name } = this.definition
    const { command, cwd } = this.transport
    const host = this.endpoint.host
    if (this.stopping) return undefined
    // The agent's ssh ends with the connection's, a moment apart: wait for the connection to say why.
    if (code === SSH_FAILED || signal !== null || !this.master.alive) {
      const end = await Promise.race([this.master.ended, new Promise<null>((r) => setTimeout(() => r(null), 1000))])
      if (end && !this.master.stopping) {
        this.loseConnection()
        return `The connection to agent '${name}' on ${host} was lost: ${this.master.reason()}`
      }
    }
    const stderr = this.run?.explanation().lines.join('\n') ?? ''
    if (code === 127 && /not found|No such file/i.test(stderr)) {
      return `Agent '${name}' could not be started on ${host}: the command '${command}' was not found there (commands over SSH run without a terminal, where the shell may read fewer startup files: give the command's absolute path)`
    }
    if (code === 126 && stderr.includes(NO_FOLDER_LINE)) {
      return `Agent '${name}' could not be started on ${host}: its working folder ${cwd} does not exist there. Edit the agent to choose another.`
    }
    if (code === null) return undefined
    return `Agent '${name}' on ${host} exited with code ${code}`
  }

  /** The connection was lost under a running agent: what it left on the host is ended by the next agent started there. */
  private loseConnection(): void {
    if (this.lost) return
    this.lost = true
    this.ssh.hosts.leftBehind(this.endpoint.host, this.remoteMark)
  }

  /** The connection could not be made (or was closed before the agent started): the link ends, said as a start that failed. */
  private endUnstarted(reason: string, fromAgent: TransformStream<AnyMessage, AnyMessage>): void {
    this.unreachable = reason
    const message = this.exitMessage()
    this.writeLog(`--- ${message}\n`)
    if (!this.stopping && !this.put) this.options.setState({ status: 'exited', message })
    this.options.closeStream(new Error(message))
    void fromAgent.writable.close().catch(() => undefined)
    this.rejectExited(new Error(message))
    this.finish()
  }

  private writeLog(text: string): void {
    this.log?.write(text)
  }

  private finish(): void {
    if (this.log) {
      this.log.end()
      this.log = null
    }
    this.resolveClosed()
  }
}
