import { randomUUID } from 'node:crypto'
import {
  validateMcpProfile,
  type McpLastTest,
  type McpPair,
  type McpProfile,
  type McpProfileView,
  type McpState,
  type ParsedMcpProfileInput
} from '../../../shared/mcp'
import type { SecretStore } from '../storage/secrets'
import type { Records } from '../storage/records'

/**
 * MCP server profiles in db.json, their secret values in the secret store.
 * A secret env value or header value is never written to db.json: the pair
 * keeps its name with `secret: true` and an empty value, and the value lives
 * under `mcpSecretKey(...)`. Every edit bumps the profile's version; session
 * records name the version they started with, so editing never rewrites them.
 */

export type PairKind = 'env' | 'header'

export function mcpSecretKey(profileId: string, kind: PairKind, name: string): string {
  return `mcp:${profileId}:${kind}:${name}`
}

/** A profile's env and headers with every secret value filled in from the store. */
export interface UnlockedProfile {
  profile: McpProfile
  env: { name: string; value: string }[]
  headers: { name: string; value: string }[]
  /** Secret pairs whose value is not in the secret store (e.g. a memory-only store after a restart). */
  missingSecrets: string[]
}

export class McpProfiles {
  constructor(
    private readonly records: Records,
    private readonly secrets: SecretStore,
    private readonly onChange: (state: McpState) => void
  ) {}

  get profiles(): readonly McpProfile[] {
    return this.records.data.mcpProfiles
  }

  profile(id: string): McpProfile {
    const profile = this.profiles.find((p) => p.id === id)
    if (!profile) throw new Error(`No MCP server with id '${id}'`)
    return profile
  }

  async state(): Promise<McpState> {
    return {
      profiles: await Promise.all(this.profiles.map((p) => this.view(p))),
      disabled: this.records.data.mcpDisabled,
      secretsPersistent: this.secrets.persistent
    }
  }

  /** The profiles a project's sessions get: switched on, global or attached to it, and not switched off there; and a preset's (switched on). */
  forProject(projectId: string, presetProfileIds: readonly string[] = []): McpProfile[] {
    const off = this.records.data.mcpDisabled[projectId] ?? []
    return this.profiles.filter(
      (p) => p.enabled && (((p.scope === 'global' || p.projectIds.includes(projectId)) && !off.includes(p.id)) || presetProfileIds.includes(p.id))
    )
  }

  /**
   * Creates or edits a profile (a new version); secret values go to the secret
   * store. `beforeWrite` sees the whole change once it is valid and before
   * anything is written (a confirmation); a refusal there changes nothing.
   */
  async save(input: ParsedMcpProfileInput, beforeWrite?: (change: McpProfileChange) => Promise<void>): Promise<McpProfileView> {
    const existing = input.id ? this.profile(input.id) : undefined
    const others = this.profiles.filter((p) => p.id !== existing?.id)
    const stdio = input.transport === 'stdio'
    const env = stdio ? trimPairs(input.env) : []
    const headers = stdio ? [] : trimPairs(input.headers)
    const candidate = { ...input, name: input.name.trim(), env, headers }
    const errors = validateMcpProfile(
      candidate,
      others.map((p) => p.name)
    )
    const unknownProject = input.projectIds.find((id) => !this.records.findProject(id))
    const problems = [...Object.values(errors), ...(unknownProject ? [`No project with id '${unknownProject}'`] : [])]
    if (problems.length) throw new Error(problems.join(' '))

    const id = existing?.id ?? randomUUID()
    const envPlan = await this.planPairs(id, 'env', env, existing?.env ?? [])
    const headerPlan = await this.planPairs(id, 'header', headers, existing?.headers ?? [])
    const storedEnv = envPlan.stored
    const storedHeaders = headerPlan.stored
    const now = new Date().toISOString()
    const profile: McpProfile = {
      id,
      name: candidate.name,
      version: (existing?.version ?? 0) + 1,
      enabled: input.enabled,
      scope: input.scope,
      projectIds: input.scope === 'projects' ? [...new Set(input.projectIds)] : [],
      transport: input.transport,
      command: stdio ? input.command.trim() : '',
      args: stdio ? input.args : [],
      env: storedEnv,
      ...(stdio && input.cwd?.trim() ? { cwd: input.cwd.trim() } : {}),
      url: stdio ? '' : input.url.trim(),
      headers: storedHeaders,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now
    }
    const newSecretEnv = storedEnv.filter((p) => p.secret && envPlan.writes.some(([key]) => key === mcpSecretKey(id, 'env', p.name)))
    await beforeWrite?.({ existing, profile, newSecretEnv: newSecretEnv.map((p) => p.name) })
    // Secrets first: a profile that names a secret has its value stored.
    for (const [key, value] of [...envPlan.writes, ...headerPlan.writes]) await this.secrets.set(key, value)
    // A test says something of the connection it made: it still holds while nothing it used changed.
    const writesSecrets = envPlan.writes.length + headerPlan.writes.length > 0
    if (existing?.lastTest && !writesSecrets && sameConnection(existing, profile)) profile.lastTest = existing.lastTest
    // Secrets of pairs that are gone (or no longer secret) are forgotten.
    await this.forgetSecrets(id, 'env', existing?.env ?? [], storedEnv)
    await this.forgetSecrets(id, 'header', existing?.headers ?? [], storedHeaders)
    await this.changed({ profiles: existing ? this.profiles.map((p) => (p === existing ? profile : p)) : [...this.profiles, profile] })
    return this.view(profile)
  }

  async remove(id: string): Promise<void> {
    const profile = this.profile(id)
    await this.forgetSecrets(id, 'env', profile.env, [])
    await this.forgetSecrets(id, 'header', profile.headers, [])
    const disabled = Object.entries(this.records.data.mcpDisabled).map(([projectId, off]) => [projectId, off.filter((p) => p !== id)])
    await this.changed({ profiles: this.profiles.filter((p) => p.id !== id), disabled: Object.fromEntries(disabled) })
  }

  /** Switches a profile on or off for one project (not an edit of the profile: its version stays). */
  async setProjectEnabled(projectId: string, profileId: string, enabled: boolean): Promise<void> {
    if (!this.records.findProject(projectId)) throw new Error(`No project with id '${projectId}'`)
    const profile = this.profile(profileId)
    if (enabled && profile.scope === 'projects' && !profile.projectIds.includes(projectId)) {
      throw new Error(`“${profile.name}” is not attached to this project; add the project to it first (Edit → Projects).`)
    }
    const off = (this.records.data.mcpDisabled[projectId] ?? []).filter((id) => id !== profileId)
    await this.changed({ disabled: { ...this.records.data.mcpDisabled, [projectId]: enabled ? off : [...off, profileId] } })
  }

  /** Keeps what a connection test found (not an edit: the version stays); a profile deleted meanwhile is let be. */
  async recordTest(profileId: string, test: McpLastTest): Promise<void> {
    const profile = this.profiles.find((p) => p.id === profileId)
    if (!profile) return
    await this.changed({ profiles: this.profiles.map((p) => (p === profile ? { ...p, lastTest: test } : p)) })
  }

  /** The profile with its secret values, for a session or a connection test. */
  async unlock(profile: McpProfile): Promise<UnlockedProfile> {
    const missingSecrets: string[] = []
    const fill = async (kind: PairKind, pairs: McpPair[]): Promise<{ name: string; value: string }[]> => {
      const out: { name: string; value: string }[] = []
      for (const pair of pairs) {
        if (!pair.secret) {
          out.push({ name: pair.name, value: pair.value })
          continue
        }
        const value = await this.secrets.get(mcpSecretKey(profile.id, kind, pair.name))
        if (value === undefined) missingSecrets.push(pair.name)
        else out.push({ name: pair.name, value })
      }
      return out
    }
    return { profile, env: await fill('env', profile.env), headers: await fill('header', profile.headers), missingSecrets }
  }

  private async view(profile: McpProfile): Promise<McpProfileView> {
    return { ...profile, missingSecrets: (await this.unlock(profile)).missingSecrets }
  }

  /**
   * The pairs as db.json keeps them, and the secret values to store: a
   * secret's value goes to the secret store (a secret sent without a value
   * keeps the stored one; a value that was plain until now moves there).
   * Nothing is written here, so a refusal leaves everything as it was.
   */
  private async planPairs(
    id: string,
    kind: PairKind,
    pairs: { name: string; value?: string; secret: boolean }[],
    before: McpPair[]
  ): Promise<{ stored: McpPair[]; writes: [string, string][] }> {
    const stored: McpPair[] = []
    const writes: [string, string][] = []
    for (const pair of pairs) {
      if (!pair.secret) {
        stored.push({ name: pair.name, value: pair.value ?? '', secret: false })
        continue
      }
      const key = mcpSecretKey(id, kind, pair.name)
      const plainBefore = before.find((b) => !b.secret && b.name === pair.name)?.value
      const keptBefore = before.some((b) => b.secret && b.name === pair.name) && (await this.secrets.get(key)) !== undefined
      if (pair.value) writes.push([key, pair.value])
      else if (plainBefore) writes.push([key, plainBefore])
      else if (!keptBefore) {
        throw new Error(`${kind === 'env' ? 'The variable' : 'The header'} ${pair.name} is marked secret but has no value: enter it.`)
      }
      stored.push({ name: pair.name, value: '', secret: true })
    }
    return { stored, writes }
  }

  private async forgetSecrets(id: string, kind: PairKind, before: McpPair[], after: McpPair[]): Promise<void> {
    for (const pair of before) {
      if (pair.secret && !after.some((a) => a.secret && a.name === pair.name)) await this.secrets.delete(mcpSecretKey(id, kind, pair.name))
    }
  }

  /** Saved, then told to the windows as they show it (with what the secret store holds). */
  private async changed(change: Parameters<Records['setMcp']>[0]): Promise<void> {
    await this.records.setMcp(change)
    this.onChange(await this.state())
  }
}

/** A profile about to be saved: the one it replaces, and the secret variables given a new value. */
export interface McpProfileChange {
  existing?: McpProfile
  profile: McpProfile
  newSecretEnv: string[]
}

/** Whether two versions of a profile connect the same way (a test of one holds for the other). */
function sameConnection(a: McpProfile, b: McpProfile): boolean {
  const key = (p: McpProfile) => JSON.stringify([p.transport, p.command, p.args, p.env, p.cwd ?? '', p.url, p.headers])
  return key(a) === key(b)
}

function trimPairs(pairs: { name: string; value?: string; secret: boolean }[]): { name: string; value?: string; secret: boolean }[] {
  // An empty row (name and value left blank in the form) is not a pair.
  return pairs.filter((p) => p.name.trim() || p.value?.trim()).map((p) => ({ ...p, name: p.name.trim() }))
}
