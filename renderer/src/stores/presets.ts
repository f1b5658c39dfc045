import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { PresetInput } from '../../../shared/preset-requests'
import type { SessionPreset } from '../../../shared/presets'
import { host } from '../host/client'

/**
 * Session presets (shared/presets.ts): read from the Host when first needed
 * (the Agents page, a project's New session button), then kept current by
 * `presets.changed` events (event-router.ts).
 */
export const usePresetsStore = defineStore('presets', () => {
  const list = ref<SessionPreset[]>([])
  const loaded = ref(false)
  let loading: Promise<void> | null = null

  function receive(next: SessionPreset[]): void {
    list.value = next
    loaded.value = true
  }

  /** Reads them once (again after `reload`); every caller waits for the same request. */
  function ensure(): Promise<void> {
    if (loaded.value) return Promise.resolve()
    loading ??= host()
      .request('presets.list', {})
      .then(receive)
      .finally(() => (loading = null))
    return loading
  }

  function byId(id: string | undefined): SessionPreset | undefined {
    return id ? list.value.find((p) => p.id === id) : undefined
  }

  async function add(input: PresetInput): Promise<SessionPreset> {
    const preset = await host().request('presets.add', input)
    receive([...list.value.filter((p) => p.id !== preset.id), preset])
    return preset
  }

  async function update(presetId: string, input: PresetInput): Promise<SessionPreset> {
    const preset = await host().request('presets.update', { presetId, ...input })
    receive(list.value.map((p) => (p.id === presetId ? preset : p)))
    return preset
  }

  async function remove(presetId: string): Promise<void> {
    await host().request('presets.remove', { presetId })
    receive(list.value.filter((p) => p.id !== presetId))
  }

  return { list, loaded, receive, ensure, byId, add, update, remove }
})
