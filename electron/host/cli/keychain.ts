import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { secretNamesOf } from '../../../shared/transport'
import { agentApiKeyKey, agentEnvKey, agentHeaderKey } from '../storage/secrets'
import { CliError, EXIT } from './exit-codes'

/**
 * A Host the command opens in its own process has no keychain: the app keeps agents' secrets (their variables,
 * headers, API keys) in secrets.json, encrypted with the OS keychain through Electron's safeStorage
 * (electron/secret-store.ts), which the command, plain Node, cannot unlock. So before such a Host starts an agent,
 * each secret the agent is set to have must come from the command's environment (a variable of that name); else the
 * command stops, saying which agent, which secrets and why, and what to do (start the app, or pass the variable),
 * rather than run the agent without them. Headers and API keys given at sign-in cannot be passed that way.
 */
export async function checkSecretsWithoutApp(agent: AgentDefinition, dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const names = secretNamesOf(agent.transport)
  const kept = await keptSecrets(dataDir)
  const where = (key: string): string => (kept.has(key) ? 'kept in the keychain by the app' : 'not saved: the app asks for it again at each start')
  const missing: string[] = []
  const variables: string[] = []
  for (const name of names.env) {
    if (env[name]) continue
    missing.push(`the variable ${name} (${where(agentEnvKey(agent.id, name))})`)
    variables.push(name)
  }
  for (const name of names.headers) missing.push(`the header ${name} (${where(agentHeaderKey(agent.id, name))})`)
  for (const methodId of agent.apiKeySignIn ?? []) missing.push(`the API key it signed in with (${where(agentApiKeyKey(agent.id, methodId))})`)
  if (missing.length === 0) return
  const pass = variables.length
    ? `, or give ${variables.length === 1 ? 'it' : 'them'} to this command: ${variables.map((name) => `${name}=…`).join(' ')} switchboard run …`
    : ''
  throw new CliError(
    `${agent.name} needs ${missing.join(', ')}, which this command cannot unlock: Switchboard is not running, and ` +
      `without it the command has no access to the keychain the app's secrets are encrypted with. ` +
      `Start Switchboard and run this again (the command then goes through the app)${pass}.`,
    EXIT.secrets
  )
}

/** The keys secrets.json holds (never its values, which only the app can decrypt); none when there is no such file. */
async function keptSecrets(dataDir: string): Promise<Set<string>> {
  try {
    return new Set(Object.keys(JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>))
  } catch {
    return new Set()
  }
}
