import { homedir } from 'node:os'
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { SshTransport } from '../../../shared/transport'
import { newProcessMark } from '../child-processes/process-tree'
import { SSH_FAILED, SSH_NOT_FOUND, type SshEndpoint } from '../ssh/endpoint'
import { SshMaster } from '../ssh/master'
import type { SshHosts } from '../ssh/options'
import { lifelineScript, NO_FOLDER_LINE } from '../ssh/script'
import type { AgentLink, LinkEnd, ProcessDiagnostics } from './link'
import { AgentRun, type ProcessRunOptions } from './process-link'

/**
 * An agent on another host, over SSH: one shared connection to the host
 * (SshMaster: `ssh -M -N`, keep-alive messages), then the agent's command
 * started there through that connection by an `ssh` whose stdio is the ACP
 * stream (an AgentRun: the same stdout guard, stderr log and stop as a local
 * agent). File requests and terminals of its sessions ride the same
 * connection (`endpoint`, which ssh.ts gives the connection). The command is
 * wrapped (ssh/script.ts) so it ends when its stdin closes, which is what the
 * host sees when the connection drops or Switchboard stops it; its variables
 * and secrets travel on stdin, never on a command line there. Messages the
 * SDK writes while the connection opens wait in the link's own stream. A
 * link is never reused.
 */

export interface SshLinkOptions {
  /** The way to the host, with the socket of this link's connection. */
  endpoint: SshEndpoint
  hosts: SshHosts
  /** The agent's variables and secrets, for its environment on the host. */
  remoteEnv: Record<string, string>
}

export class SshLink implements AgentLink {
  readonly stream: Stream
  /** A connection that cannot be made ends the link too, with what ssh said. */
  readonly exited: Promise<LinkEnd>
  private stopping = false
  private run: AgentRun | null = null
  private readonly master: SshMaster
  private readonly endpoint: SshEndpoint
  private lost = false
  /** The mark of the agent's processes on the host (see ssh/script.ts). */
  private readonly remoteMark: string
  private resolveExited!: (end: LinkEnd) => void

  constructor(
    private readonly definition: Pick<AgentDefinition, 'id' | 'name' | 'installHint'>,
    private readonly transport: SshTransport,
    options: ProcessRunOptions,
    private readonly ssh: SshLinkOptions
  ) {
    this.exited = new Promise<LinkEnd>((resolve) => (this.resolveExited = resolve))
    this.endpoint = ssh.endpoint
    this.remoteMark = newProcessMark(options.markPrefix)
    options.log(`\n--- ${new Date().toISOString()} connecting to ${this.endpoint.host} over SSH\n`)
    this.master = new SshMaster(this.endpoint, (text) => options.log(text))
    const toAgent = new TransformStream<AnyMessage, AnyMessage>()
    const fromAgent = new TransformStream<AnyMessage, AnyMessage>()
    this.stream = { readable: fromAgent.readable, writable: toAgent.writable }
    const unstarted = (reason: string): void => {
      // The connection could not be made (or was closed before the agent started): the link ends, said as a start that failed.
      const summary = `Agent '${definition.name}' could not connect to ${this.endpoint.host} over SSH: ${reason}`
      options.log(`--- ${summary}\n`)
      void fromAgent.writable.close().catch(() => undefined)
      this.resolveExited({ summary })
    }
    this.master.ready.then(
      () => {
        if (this.stopping) return unstarted('closed by Switchboard')
        options.log('--- connected\n')
        const run = (this.run = new AgentRun(definition, transport, options, this.launch()))
        void toAgent.readable.pipeTo(run.stream.writable).catch(() => undefined)
        void run.stream.readable.pipeTo(fromAgent.writable).catch(() => undefined)
        void run.exited.then((end) => this.resolveExited({ ...end, connectionLost: this.lost }))
        // The agent's ssh ended: the connection goes with it.
        void run.exited.then(() => this.master.stop())
        void this.master.ended.then(() => {
          if (!this.master.stopping && !this.stopping) this.loseConnection()
        })
      },
      (error: Error) => unstarted(error.message)
    )
  }

  /** The stderr of the agent's command there (through its ssh); nothing before it starts. The pid is ssh's, not the agent's: none is told. */
  get diagnostics(): ProcessDiagnostics {
    const run = this.run
    return {
      pid: undefined,
      commandNotFound: run?.commandNotFound ?? false,
      stderrMark: () => run?.stderrMark() ?? 0,
      stderrSince: (mark) => run?.stderrSince(mark) ?? '',
      explanation: (mark) => run?.explanation(mark) ?? { lines: [], found: false },
      stderrQuiet: async () => await run?.stderrQuiet()
    }
  }

  /** Stops the agent (its stdin closed: the host's side ends it), then the connection. */
  async stop(): Promise<void> {
    this.stopping = true
    if (this.run) await this.run.stop()
    await this.master.stop()
    await this.master.ready.catch(() => undefined)
    await this.exited
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
}
