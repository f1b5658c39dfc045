import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AgentDefinition, DistributionKind } from '../../../shared/agent-definition'
import type { PresetVersionView, RegistryListing, RegistryProgress } from '../../../shared/registry'
import { host } from '../host/client'

/** The ACP Registry as the Agents page shows it: the listing, installs under way, the feed URL. */
export const useRegistryStore = defineStore('registry', () => {
  const listing = ref<RegistryListing | null>(null)
  const loading = ref(false)
  /** Installs and updates under way, by registry id, with their last progress. */
  const progress = ref<Record<string, RegistryProgress>>({})

  /** Lists the registry (the day's copy unless `refresh`); throws the Host's message. */
  async function load(refresh = false): Promise<void> {
    loading.value = true
    try {
      listing.value = await host().request('registry.list', { refresh })
    } finally {
      loading.value = false
    }
  }

  function receiveProgress(update: RegistryProgress): void {
    if (update.phase === 'done' || update.phase === 'failed') delete progress.value[update.registryId]
    else progress.value[update.registryId] = update
  }

  /** Runs an install or update, showing it under way at once (before the first progress event). */
  async function underWay<T>(registryId: string, work: () => Promise<T>): Promise<T> {
    progress.value[registryId] = { registryId, phase: 'downloading', received: 0, total: null }
    try {
      const result = await work()
      await load().catch(() => undefined)
      return result
    } finally {
      delete progress.value[registryId]
    }
  }

  function install(registryId: string, kind?: DistributionKind): Promise<AgentDefinition> {
    return underWay(registryId, () => host().request('registry.install', { registryId, ...(kind ? { kind } : {}) }))
  }

  function update(registryId: string, agentId: string): Promise<AgentDefinition> {
    return underWay(registryId, () => host().request('registry.update', { agentId }))
  }

  async function pin(agentId: string, pinned: boolean): Promise<void> {
    await host().request('registry.pin', { agentId, pinned })
    await load()
  }

  /** Which version each preset agent runs, and a newer one to offer (the registry's, or the tested one), by agent id. */
  const presetVersions = ref<Record<string, PresetVersionView>>({})

  async function loadPresetVersions(refresh = false): Promise<void> {
    const views = await host().request('registry.presetVersions', { refresh })
    presetVersions.value = Object.fromEntries(views.map((v) => [v.agentId, v]))
  }

  /** Runs the preset agent at another version (confirmed by the user); the Host checks it afterwards. */
  async function updatePreset(agentId: string, version: string): Promise<AgentDefinition> {
    const updated = await host().request('registry.updatePreset', { agentId, version })
    await loadPresetVersions().catch(() => undefined)
    return updated
  }

  async function setUrl(url: string): Promise<void> {
    await host().request('registry.setUrl', { url })
    await load(true)
  }

  return { listing, loading, progress, load, receiveProgress, install, update, pin, setUrl, presetVersions, loadPresetVersions, updatePreset }
})
