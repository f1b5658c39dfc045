import { defineStore } from 'pinia'
import { ref, toRaw } from 'vue'
import type { SessionRecord } from '../../../shared/domain'
import { agentFitsProject } from '../../../shared/agent-definition'
import { host } from '../host/client'
import { useAgentsStore } from './agents'
import { useChangesStore } from './changes'
import { useNoticesStore } from './notices'
import { usePresetsStore } from './presets'
import { useProjectsStore } from './projects'
import { useSessionsStore } from './sessions'

/**
 * "Continue with…" (sessions.handOff): a conversation handed to another agent
 * or preset. The new session opens in the same pane with the conversation
 * attached to its message box (a chip the user sees and may remove); what the
 * user types first goes with it. Review notes not sent yet in the session's
 * Changes view go along.
 */

export interface HandOffTarget {
  /** `agent:<id>` or `preset:<id>`. */
  key: string
  label: string
  /** What it is: the agent's name for a preset, "agent" for an agent. */
  detail: string
  agentId: string
  target: { agentId: string } | { presetId: string }
}

export const useHandOffStore = defineStore('hand-off', () => {
  const agents = useAgentsStore()
  const presets = usePresetsStore()
  const projects = useProjectsStore()
  const notices = useNoticesStore()
  /** The session whose "Continue with…" picker is open. */
  const pickerFor = ref<string | null>(null)
  /** A hand-off under way, by the session it leaves. */
  const busy = ref<string | null>(null)

  /** Every other agent that can work where the session's project is, then every preset whose agent can. */
  function targets(session: SessionRecord): HandOffTarget[] {
    // The presets are read the first time they are needed; the list fills in when they come.
    if (!presets.loaded) void presets.ensure().catch(() => undefined)
    const project = projects.projectById(session.projectId)
    const fits = (agentId: string): boolean => {
      const definition = agents.definitions.find((d) => d.id === agentId)
      return Boolean(definition && (!project || agentFitsProject(definition, project)))
    }
    const ofAgents = agents.definitions
      .filter((d) => d.id !== session.agentId && fits(d.id))
      .map((d) => ({ key: `agent:${d.id}`, label: d.name, detail: 'agent', agentId: d.id, target: { agentId: d.id } }))
    const ofPresets = presets.list
      .filter((p) => fits(p.agentId))
      .map((p) => ({
        key: `preset:${p.id}`,
        label: p.name,
        detail: `preset · ${agents.name(p.agentId)}`,
        agentId: p.agentId,
        target: { presetId: p.id }
      }))
    return [...ofAgents, ...ofPresets]
  }

  /** Opens the picker (its presets read first, when they never were). */
  async function pick(sessionId: string): Promise<void> {
    await presets.ensure().catch(() => undefined)
    pickerFor.value = sessionId
  }

  /** Hands the session's conversation to the target; the new session opens in its place. */
  async function handOff(sessionId: string, target: HandOffTarget['target']): Promise<SessionRecord | null> {
    const reviewNotes = structuredClone(toRaw(useChangesStore().views[sessionId]?.comments ?? []))
    busy.value = sessionId
    try {
      const record = await notices.attempt(() => host().request('sessions.handOff', { id: sessionId, ...target, reviewNotes }))
      if (!record) return null
      projects.upsertSession(record)
      await useSessionsStore().open(record.id)
      return record
    } finally {
      busy.value = null
    }
  }

  /** The conversation attached to the session's next message is not to be sent. */
  async function dropSeed(sessionId: string): Promise<void> {
    const record = await notices.attempt(() => host().request('sessions.dropHandOffSeed', { id: sessionId }))
    if (record) projects.upsertSession(record)
  }

  return { pickerFor, busy, targets, pick, handOff, dropSeed }
})
