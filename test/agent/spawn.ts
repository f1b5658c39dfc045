import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { TransportInput } from '../../shared/agent-requests'
import { SCRIPTED_AGENT_BUNDLE_ENV } from '../bundle-env'

/**
 * How to start the scripted ACP agent (./scripted-agent.ts) as a subprocess,
 * from any working directory, as absolute references: under vitest, the current
 * Node binary on the one-file build that the run's globalSetup made of it
 * (../bundles.ts, named in SCRIPTED_AGENT_BUNDLE); elsewhere (bench/, by hand),
 * the current Node binary with tsx's ESM loader and the script. The script is
 * always the last argument.
 */
export function scriptedAgentCommand(): { command: string; args: string[] } {
  const bundle = process.env[SCRIPTED_AGENT_BUNDLE_ENV]
  if (bundle) return { command: process.execPath, args: [bundle] }
  const tsxLoader = createRequire(import.meta.url).resolve('tsx') // …/node_modules/tsx/dist/loader.mjs
  const script = fileURLToPath(new URL('./scripted-agent.ts', import.meta.url))
  // `--import` takes a module specifier: an absolute path works on POSIX, Windows needs a file URL.
  const loader = process.platform === 'win32' ? pathToFileURL(tsxLoader).href : tsxLoader
  return { command: process.execPath, args: ['--import', loader, script] }
}

/** A process transport as `agents.add` takes it (shared/agent-requests.ts). */
export type ProcessTransportInput = Extract<TransportInput, { kind: 'process' }>

/**
 * How an agent that is the scripted test agent is reached: a process transport
 * running `scriptedAgentCommand()` with `env` (its SCRIPTED_AGENT_* switches),
 * plus any other field of the transport (`cwd`, `secretEnv`, other `args`…).
 */
export function scriptedTransport(env: Record<string, string> = {}, more: Partial<Omit<ProcessTransportInput, 'kind'>> = {}): ProcessTransportInput {
  return { kind: 'process', ...scriptedAgentCommand(), env, secretEnv: {}, ...more }
}
