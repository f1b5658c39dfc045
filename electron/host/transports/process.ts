import { commandOf, secretNamesOf, type ProcessTransport } from '../../../shared/transport'
import { checkCommand, checkWorkingFolder, commandChanges, commandProgram } from './command-input'
import type { TransportKindModule } from './kind'
import { AgentRun } from './process-link'

/**
 * An agent that is a process on this computer, speaking ACP on its stdio
 * (process-link.ts `AgentRun`). Its command is looked up on the user's PATH;
 * a terminal sign-in runs it here.
 */
export const processKind: TransportKindModule<ProcessTransport> = {
  async check(input, previous) {
    // Absent: the folder it had (when it ran a command), as it was; empty: the home folder.
    const cwd = input.cwd === undefined ? previous && commandOf(previous)?.cwd : await checkWorkingFolder(input.cwd)
    const { command, secretValues } = checkCommand(input, cwd, previous ? secretNamesOf(previous).env : [])
    return { transport: { kind: 'process', ...command }, secretValues, headerValues: {} }
  },

  program: (name, transport, checked) => commandProgram(`Agent “${name}”`, transport, checked.secretValues),

  changesWhatRuns: (next, before, checked) => commandChanges(next, before, checked.secretValues),

  terminalSignIn: (_name, transport) => transport,

  async installed(definition, transport, environment) {
    const found = await environment.find(transport.command, { layers: [transport.env], cwd: transport.cwd })
    if (found) return { installed: true }
    const how = definition.installHint
      ? ` Install it with \`${definition.installHint}\`, or fix the agent's command.`
      : " Install it, or fix the agent's command."
    return { installed: false, message: `${definition.name}: the command '${transport.command}' was not found.${how}` }
  },

  plan: (definition, transport, host) => ({
    // The user's environment, its own variables, its own secrets: nothing of another agent's, nor of Switchboard's.
    open: (options) => new AgentRun(definition, transport, { ...options, env: host.environment.forChild(transport.env, host.secretEnv) })
  })
}
