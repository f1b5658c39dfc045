/**
 * Where secrets go (API keys an agent needs in its environment, and later MCP
 * env values and headers marked secret): never db.json. The Electron shell
 * supplies a store backed by the OS keychain (safeStorage); the headless host
 * and tests use the in-memory one, which forgets everything when it stops.
 */
export interface SecretStore {
  /** False when secrets do not survive a restart (the in-memory store). */
  readonly persistent: boolean
  get(key: string): Promise<string | undefined>
  set(key: string, value: string): Promise<void>
  delete(key: string): Promise<void>
}

export class MemorySecretStore implements SecretStore {
  readonly persistent = false
  private readonly values = new Map<string, string>()

  async get(key: string): Promise<string | undefined> {
    return this.values.get(key)
  }

  async set(key: string, value: string): Promise<void> {
    this.values.set(key, value)
  }

  async delete(key: string): Promise<void> {
    this.values.delete(key)
  }
}

/** The key of an environment variable kept for an agent. */
export function agentEnvKey(agentId: string, name: string): string {
  return `agent:${agentId}:env:${name}`
}

/** The key of a header sent to a network agent (its token…). */
export function agentHeaderKey(agentId: string, name: string): string {
  return `agent:${agentId}:header:${name.toLowerCase()}`
}

/** The key of an API key an agent's sign-in method was given (sent in `authenticate`'s `_meta`). */
export function agentApiKeyKey(agentId: string, methodId: string): string {
  return `agent:${agentId}:api-key:${methodId}`
}

/** How a forgotten API key is named to the user (in `missingSecrets`). */
export function apiKeyLabel(methodName: string): string {
  return `the API key of "${methodName}"`
}
