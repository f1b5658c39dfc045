import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import type { KeepResult, Race, RaceComparison } from '../../../shared/race'
import { MAX_PANES } from '../../../shared/settings'
import { host, messageOf } from '../host/client'
import { usePanesStore } from './panes'
import { useProjectsStore } from './projects'
import { useSessionsStore } from './sessions'
import { useUiStore } from './ui'
import { useViewStore } from './view'

/**
 * Races (shared/race.ts): starting one from the new-session control (the
 * racers then open side by side in panes), and the comparison page: which
 * race it shows, the Host's comparison of it (asked again when the race
 * changes, `race.changed`, or a racer's turn ends), the check command's runs,
 * keeping one and removing the others.
 */
export const useRacesStore = defineStore('races', () => {
  /** The new-race dialog is open for this project. */
  const dialogFor = ref<string | null>(null)
  /** The race the comparison page shows. */
  const shownId = ref<string | null>(null)
  const comparison = shallowRef<RaceComparison | null>(null)
  const loading = ref(false)
  const error = ref('')
  let asked = 0
  let again: ReturnType<typeof setTimeout> | null = null

  /**
   * Starts the race and opens its racers side by side: the first in the
   * focused pane, the others beside it; when that would be more than fit, the
   * panes become the racers'. Resolves with the race (a racer that could not
   * start is in it, with why); throws what stopped the whole race.
   */
  async function start(projectId: string, entries: { agentId: string; presetId?: string }[], prompt: string): Promise<Race> {
    const race = await host().request('races.start', { projectId, entries, prompt })
    const ids = race.racers.flatMap((r) => (r.sessionId ? [r.sessionId] : []))
    const sessions = useSessionsStore()
    const records = await useProjectsStore().fetchSessions(ids)
    for (const record of records) useProjectsStore().upsertSession(record)
    openSideBySide(ids)
    for (const id of ids) void sessions.load(id)
    const failed = race.racers.filter((r) => r.state === 'failed')
    if (failed.length) useUiStore().toast(`${failed.map((r) => r.name).join(', ')} could not start: the race's comparison says why.`, 'warn')
    return race
  }

  function openSideBySide(ids: string[]): void {
    const panes = usePanesStore()
    if (ids.length === 0) return
    if (panes.panes.length - 1 + ids.length > MAX_PANES) {
      const layout = ids.slice(0, MAX_PANES).map((sessionId, i) => ({ id: `pane-race-${Date.now().toString(36)}-${i}`, sessionId }))
      panes.restore({ panes: layout, focused: layout[0]?.id ?? '', maximised: null })
      return
    }
    const [first, ...rest] = ids
    if (first) panes.show(first)
    for (const id of rest) panes.split(id)
    if (first) panes.show(first)
  }

  /** Opens a race's comparison page (from a racing session's header or its row in the sidebar). */
  function openComparison(raceId: string): void {
    show(raceId)
    useViewStore().show('race')
  }

  /** Shows a race's comparison (the page). */
  function show(raceId: string): void {
    if (shownId.value !== raceId) comparison.value = null
    shownId.value = raceId
    void load()
  }

  async function load(): Promise<void> {
    const raceId = shownId.value
    if (!raceId) return
    const mine = ++asked
    loading.value = true
    try {
      const result = await host().request('races.compare', { raceId })
      if (mine !== asked) return
      comparison.value = result
      error.value = ''
    } catch (e) {
      if (mine === asked) error.value = messageOf(e)
    } finally {
      if (mine === asked) loading.value = false
    }
  }

  /** A race changed (or a racer's session did): the comparison shown is asked again, once for a burst. */
  function receive(race: Race): void {
    if (race.id === shownId.value) loadSoon()
  }

  function loadSoon(): void {
    if (!shownId.value || again) return
    again = setTimeout(() => {
      again = null
      void load()
    }, 150)
  }

  async function runCheck(sessionId: string): Promise<void> {
    if (!shownId.value) return
    await host().request('races.runCheck', { raceId: shownId.value, sessionId })
  }

  async function cancelCheck(sessionId: string): Promise<void> {
    if (!shownId.value) return
    await host().request('races.cancelCheck', { raceId: shownId.value, sessionId })
  }

  async function checkOutput(sessionId: string): Promise<{ output: string; truncated: boolean }> {
    return host().request('races.checkOutput', { raceId: shownId.value ?? '', sessionId })
  }

  async function keep(sessionId: string): Promise<KeepResult> {
    const result = await host().request('races.keep', { raceId: shownId.value ?? '', sessionId })
    void load()
    return result
  }

  async function removeOthers(): Promise<{ removed: string[]; refused: { sessionId: string; reason: string }[] }> {
    const result = await host().request('races.removeOthers', { raceId: shownId.value ?? '' })
    void load()
    return result
  }

  /** The project's check command (confirmed outside the page by the Host before it is kept). */
  async function setCheckCommand(projectId: string, command: string): Promise<void> {
    useProjectsStore().upsertProject(await host().request('projects.setCheckCommand', { projectId, command }))
    void load()
  }

  return {
    dialogFor,
    shownId,
    comparison,
    loading,
    error,
    start,
    openComparison,
    show,
    load,
    receive,
    loadSoon,
    runCheck,
    cancelCheck,
    checkOutput,
    keep,
    removeOthers,
    setCheckCommand
  }
})
