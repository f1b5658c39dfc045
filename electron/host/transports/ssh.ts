import { access } from 'node:fs/promises'
import { isAbsolute, posix } from 'node:path'
import type { TransportInput } from '../../../shared/agent-requests'
import { commandLineOf } from '../../../shared/confirmation'
import { commandOf, secretNamesOf, sshHostOf, type SshTarget, type SshTransport } from '../../../shared/transport'
import { SshEndpoint } from '../ssh/endpoint'
import { checkDestination } from '../ssh/options'
import { checkCommand, commandChanges, commandProgram } from './command-input'
import type { TransportKindModule } from './kind'
import { SshLink } from './ssh-link'

/**
 * An agent on another host, started there through the system's `ssh`
 * (ssh-link.ts `SshLink`): the command, variables, secrets and folder are the
 * host's. Its sessions' files and terminals ride the same connection
 * (`LinkPlan.sshHost`); a terminal sign-in cannot run here.
 */
export const sshKind: TransportKindModule<SshTransport> = {
  async check(input, previous) {
    const target = await checkSshTarget(input)
    // A folder on the host cannot be looked at before the agent connects: its form is checked here, its existence when it starts.
    const cwd = input.cwd === undefined ? previous && commandOf(previous)?.cwd : checkRemoteWorkingFolder(input.cwd)
    const { command, secretValues } = checkCommand(input, cwd, previous ? secretNamesOf(previous).env : [])
    return { transport: { kind: 'ssh', ...target, ...command }, secretValues, headerValues: {} }
  },

  // Over SSH the command runs there; it reads and writes files and runs commands there through Switchboard.
  program: (name, transport, checked) =>
    commandProgram(`Agent “${name}” on ${sshHostOf(transport)} over SSH${sshDetails(transport)}`, transport, checked.secretValues),

  changesWhatRuns: (next, before, checked) => targetOf(next) !== targetOf(before) || commandChanges(next, before, checked.secretValues),

  terminalSignIn(name, transport, method) {
    const line = commandLineOf(transport.command, [...transport.args, ...(method.args ?? [])])
    throw new Error(
      `${method.name} runs ${name}'s command in a terminal, but ${name} runs on ${sshHostOf(transport)}: sign in there (ssh ${transport.destination}, then run ${line}), or give its API key as a secret variable`
    )
  },

  // Its command is on its host: whether it can be reached and found shows when it connects.
  installed: async () => ({}),

  plan(definition, transport, host) {
    const { hosts, settings } = host.ssh
    // The user's environment is ssh's, on this computer; the agent's variables and secrets go to the host.
    const env = host.environment.forChild()
    const remoteEnv = { ...transport.env, ...host.secretEnv }
    // Each link its own connection (a socket of its own); the host's files and terminals ride the latest one's.
    let endpoint: SshEndpoint | undefined
    return {
      get sshHost() {
        return endpoint
      },
      open: (options) => {
        endpoint = new SshEndpoint(transport, { settings, env, controlPath: hosts.nextSocket(), markPrefix: host.markPrefix })
        return new SshLink(definition, transport, { ...options, env }, { endpoint, hosts, remoteEnv })
      }
    }
  }
}

function targetOf(t: SshTarget): string {
  return JSON.stringify([t.destination, t.port, t.identityFile, t.knownHostsFile])
}

/** Where an agent over SSH runs: a destination ssh takes, a port, key and known_hosts files that can be read here. */
async function checkSshTarget(input: Extract<TransportInput, { kind: 'ssh' }>): Promise<SshTarget> {
  const destination = checkDestination(input.destination)
  const identityFile = input.identityFile?.trim() ? await checkLocalFile(input.identityFile.trim(), 'identity file') : undefined
  const knownHostsFile = input.knownHostsFile?.trim() ? await checkLocalFile(input.knownHostsFile.trim(), 'known_hosts file') : undefined
  return {
    destination,
    ...(input.port ? { port: input.port } : {}),
    ...(identityFile ? { identityFile } : {}),
    ...(knownHostsFile ? { knownHostsFile } : {})
  }
}

async function checkLocalFile(typed: string, what: string): Promise<string> {
  if (!isAbsolute(typed)) throw new Error(`The ${what} must be an absolute path on this computer (got '${typed}')`)
  if (typed.includes('"')) throw new Error(`The ${what}'s path has a double quote in it, which ssh cannot take (got '${typed}')`)
  try {
    await access(typed)
  } catch (error) {
    throw new Error(`The ${what} ${typed} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  return typed
}

/** An agent's working folder on its host: empty for the login's home folder, else an absolute path there. */
function checkRemoteWorkingFolder(typed: string): string | undefined {
  if (!typed.trim()) return undefined
  if (!posix.isAbsolute(typed.trim()))
    throw new Error(`The working folder on the host must be an absolute path, like /home/you/code (got '${typed.trim()}')`)
  return posix.resolve(typed.trim())
}

/** How ssh is told to reach the host, for the confirmation (files on this computer). */
function sshDetails(ssh: SshTarget): string {
  const parts = [ssh.identityFile && `key ${ssh.identityFile}`, ssh.knownHostsFile && `host keys from ${ssh.knownHostsFile}`].filter(Boolean)
  return parts.length ? ` (${parts.join(', ')})` : ''
}
