import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sshHostOf, type SshTarget } from '../../../shared/transport'

/**
 * How Switchboard calls the system's OpenSSH client: never waiting for a
 * person (`BatchMode`), host keys always checked (`StrictHostKeyChecking=yes`,
 * against the user's known_hosts or the agent's own file, which is never
 * written), keep-alive messages so a dead connection is noticed, nothing
 * forwarded, no terminal. The user's ~/.ssh/config applies besides (an alias,
 * a user, a jump host), but these options win over it. And what ssh says when
 * it fails, as a sentence that says what to do.
 */

export interface SshSettings {
  /** Seconds between keep-alive messages on a connection without traffic. */
  keepAliveSeconds: number
  /** Keep-alive messages that may go unanswered before the connection counts as lost. */
  keepAliveCount: number
  /** Seconds the TCP connection may take to open. */
  connectTimeoutSeconds: number
}

export const DEFAULT_SSH_SETTINGS: SshSettings = { keepAliveSeconds: 15, keepAliveCount: 3, connectTimeoutSeconds: 20 }

/** The options of every ssh Switchboard runs, then the destination; `controlPath` shares one connection (see SshHosts). */
export function sshArgs(target: SshTarget, settings: SshSettings, connection: { controlPath?: string; master?: boolean } = {}): string[] {
  const args = [
    '-T',
    '-e',
    'none',
    ...option('BatchMode', 'yes'),
    ...option('StrictHostKeyChecking', 'yes'),
    ...option('UpdateHostKeys', 'no'),
    ...option('ServerAliveInterval', String(settings.keepAliveSeconds)),
    ...option('ServerAliveCountMax', String(settings.keepAliveCount)),
    ...option('ConnectTimeout', String(settings.connectTimeoutSeconds)),
    ...option('ForwardAgent', 'no'),
    ...option('ForwardX11', 'no'),
    ...option('ClearAllForwardings', 'yes'),
    ...option('PermitLocalCommand', 'no'),
    ...option('RequestTTY', 'no')
  ]
  if (target.knownHostsFile) args.push(...option('UserKnownHostsFile', configValue(target.knownHostsFile)))
  if (target.identityFile) args.push('-i', target.identityFile, ...option('IdentitiesOnly', 'yes'))
  if (target.port) args.push('-p', String(target.port))
  if (connection.controlPath) {
    args.push(...option('ControlPath', configValue(connection.controlPath)), ...option('ControlMaster', connection.master ? 'yes' : 'no'))
    args.push(...option('ControlPersist', 'no'))
  } else {
    // A connection of its own: the user's own ControlMaster settings would leave a master behind.
    args.push(...option('ControlMaster', 'no'), ...option('ControlPath', 'none'))
  }
  if (connection.master) args.push('-N')
  return [...args, '--', target.destination]
}

function option(name: string, value: string): string[] {
  return ['-o', `${name}=${value}`]
}

/** A value ssh reads whole (a path with spaces), double-quoted as its configuration syntax wants. */
function configValue(value: string): string {
  return /\s/.test(value) ? `"${value}"` : value
}

/** A destination as typed: `user@host`, `host` or an alias; nothing ssh would read as an option or split. */
export function checkDestination(typed: string): string {
  const destination = typed.trim()
  if (!destination) throw new Error('The agent needs a host to reach over SSH: user@host, or an alias from ~/.ssh/config')
  if (destination.startsWith('-')) throw new Error(`The SSH host cannot start with '-' (got '${destination}')`)
  if (/[\s"'\\\u0000-\u001f\u007f]/.test(destination)) {
    throw new Error(`The SSH host has a space, quote or control character in it (got '${destination}'): give user@host, or an alias`)
  }
  if (/^ssh:/i.test(destination)) throw new Error(`Give the SSH host as user@host, with the port apart (got '${destination}')`)
  return destination
}

/**
 * The command that removes the host's entry from the known_hosts file ssh read: the entry is the host alone
 * (no `user@`), `[host]:port` on a port other than 22, and the agent's own file (`-f`) when it has one; quoted
 * for a POSIX shell, to be pasted into a terminal.
 */
export function forgetHostKeyCommand(target: SshTarget): string {
  const hostName = target.destination.replace(/^.*@/, '')
  const entry = target.port && target.port !== 22 ? `[${hostName}]:${target.port}` : hostName
  const file = target.knownHostsFile ? ` -f ${shellQuoted(target.knownHostsFile)}` : ''
  return `ssh-keygen${file} -R ${shellQuoted(entry)}`
}

function shellQuoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`
}

/**
 * What ssh's stderr says about a connection that failed or ended, as a
 * sentence with what to do; null when it says nothing ssh-like (the remote
 * command's own output).
 */
export function describeSshFailure(stderr: string, target: SshTarget): string | null {
  const host = sshHostOf(target)
  const knownHosts = target.knownHostsFile ?? 'your ~/.ssh/known_hosts'
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/.test(stderr)) {
    return `the host key ${host} sent is not the one ${knownHosts} has for it (it changed), so Switchboard did not connect. If the host was reinstalled, check its new key and replace the old one (${forgetHostKeyCommand(target)}); otherwise someone may be between you and the host`
  }
  if (/Host key verification failed|host key is known for|No .* host key is known/.test(stderr)) {
    return `${host} is not a known host: its key is not in ${knownHosts}. Connect once with ssh in a terminal to check and accept its key${target.knownHostsFile ? ', or add it to that file' : ''}, then try again`
  }
  const denied = /Permission denied \(([^)]*)\)/.exec(stderr)
  if (denied) {
    const missing = /Identity file (.*) not accessible/.exec(stderr)
    return `${host} refused the key (Permission denied (${denied[1]}))${missing ? `; the identity file ${missing[1]} cannot be read` : ''}. Add your public key to ~/.ssh/authorized_keys there, or choose the identity file it accepts; Switchboard never asks for a password`
  }
  if (/Could not resolve hostname/.test(stderr)) return `the host name in ${host} cannot be resolved`
  if (/Connection refused/.test(stderr)) return `nothing is listening for SSH at ${host}${target.port ? '' : ' (port 22)'} (connection refused)`
  if (/Timeout, server not responding|Timeout, server .* not responding/.test(stderr))
    return `${host} stopped answering (no reply to the keep-alive messages)`
  if (/Connection timed out|Operation timed out/.test(stderr)) return `the connection to ${host} timed out`
  if (/No route to host|Network is unreachable/.test(stderr)) return `${host} cannot be reached from this computer (no route to it)`
  if (/Connection reset|Broken pipe|Connection closed by|closed by remote host|Connection to .* closed/.test(stderr)) {
    return `${host} closed the connection`
  }
  const line = /^(?:ssh: )?(Bad configuration option.*|Bad owner or permissions.*|.*: line \d+: .*|Too many authentication failures.*)$/m.exec(stderr)
  if (line) return `ssh refused to connect: ${line[1].trim()}`
  return null
}

/** The start of the name of a Host's SSH socket folder, followed by its pid and a dash. */
export const SSH_SOCKETS_PREFIX = 'sb-ssh-'

/**
 * What this Host keeps about its SSH connections: the private folder of their
 * sockets (ControlPath), owner-only, under the system's temporary folder (a
 * socket's path must stay short, about 100 bytes), made on first use and
 * removed at close; and, per host, the marks of agents whose connection was
 * lost while they ran. The host may not have noticed yet (sshd notices a dead
 * connection only by its own keep-alive, if set, and only while the session
 * is quiet): the next agent started there ends them first (see script.ts).
 */
export class SshHosts {
  private dir: string | null = null
  private count = 0
  private readonly left = new Map<string, Set<string>>()

  /** A fresh socket path for one connection. */
  nextSocket(): string {
    // mkdtemp makes the folder 0700: other users cannot reach the sockets in it. Named after this process, so the
    // supervisor of a Host that died without closing finds it (host-supervisor.ts, cleanUpAfterHost).
    this.dir ??= mkdtempSync(join(tmpdir(), `${SSH_SOCKETS_PREFIX}${process.pid}-`))
    return join(this.dir, `c${++this.count}`)
  }

  /** An agent's connection to `host` was lost while it ran with this mark. */
  leftBehind(host: string, mark: string): void {
    const marks = this.left.get(host) ?? new Set<string>()
    marks.add(mark)
    this.left.set(host, marks)
  }

  /** The marks left on `host`, handed to the next agent that starts there (once). */
  takeLeftBehind(host: string): string[] {
    const marks = [...(this.left.get(host) ?? [])]
    this.left.delete(host)
    return marks
  }

  close(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true })
    this.dir = null
  }
}
