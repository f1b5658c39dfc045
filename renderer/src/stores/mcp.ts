import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import type {
  McpImportFormat,
  McpImportPreview,
  McpImportSource,
  McpProfileInput,
  McpProfileView,
  McpState,
  McpTestResult
} from '../../../shared/mcp'
import type { RequestParams } from '../../../shared/contract'
import { host } from '../host/client'
import { useViewStore } from './view'

/**
 * MCP server profiles (from `mcp.list` and `mcp.changed` events), whether the
 * MCP page is showing, and each profile's last connection test.
 */
export const useMcpStore = defineStore('mcp', () => {
  const state = ref<McpState>({ profiles: [], disabled: {}, secretsPersistent: true })
  const loaded = ref(false)
  const view = useViewStore()
  /** The MCP page is one of the main area's pages (stores/view.ts). */
  const pageOpen = computed({
    get: () => view.page === 'mcp',
    set: (open: boolean) => view.show(open ? 'mcp' : 'sessions')
  })
  /** The project whose switches the page shows ('' = none picked). */
  const projectId = ref('')
  const tests = ref<Record<string, { running: boolean; result?: McpTestResult }>>({})

  const profiles = computed<McpProfileView[]>(() => state.value.profiles)

  // Opening or starting a conversation leaves the MCP page.

  /** The profiles as the Host has them: from the app's first load, `mcp.changed` events (event-router.ts) and `load`. */
  function receive(next: McpState): void {
    state.value = next
    loaded.value = true
  }

  async function load(): Promise<void> {
    receive(await host().request('mcp.list', {}))
  }

  function openPage(): void {
    pageOpen.value = true
    void load()
  }

  /** Whether a profile applies to a project at all (switched on, and global or attached to it). */
  function appliesTo(profile: McpProfileView, project: string): boolean {
    return profile.scope === 'global' || profile.projectIds.includes(project)
  }

  function onIn(profile: McpProfileView, project: string): boolean {
    return appliesTo(profile, project) && !(state.value.disabled[project] ?? []).includes(profile.id)
  }

  /** Throws the Host's message for the form to show. */
  async function save(input: McpProfileInput): Promise<McpProfileView> {
    const saved = await host().request('mcp.save', input)
    delete tests.value[saved.id]
    return saved
  }

  /** Switches a profile on or off everywhere, keeping everything else (secrets included). */
  async function setEnabled(profile: McpProfileView, enabled: boolean): Promise<void> {
    await save({ ...inputOf(profile), enabled })
  }

  async function remove(id: string): Promise<void> {
    await host().request('mcp.delete', { id })
    delete tests.value[id]
  }

  async function setProjectEnabled(project: string, profileId: string, enabled: boolean): Promise<void> {
    await host().request('mcp.setProjectEnabled', { projectId: project, profileId, enabled })
  }

  async function test(id: string): Promise<void> {
    tests.value[id] = { running: true }
    try {
      tests.value[id] = { running: false, result: await host().request('mcp.test', { id }) }
    } catch (error) {
      tests.value[id] = { running: false, result: { ok: false, error: (error as Error).message, durationMs: 0 } }
    }
  }

  function importSources(project?: string): Promise<McpImportSource[]> {
    return host().request('mcp.importSources', project ? { projectId: project } : {})
  }

  function previewImport(path: string, format?: McpImportFormat): Promise<McpImportPreview> {
    return host().request('mcp.importPreview', format ? { path, format } : { path })
  }

  async function applyImport(params: RequestParams<'mcp.importApply'>): Promise<McpProfileView[]> {
    return (await host().request('mcp.importApply', params)).imported
  }

  /**
   * Trusts a session's folder in its agent's own file (Gemini CLI leaves a folder's MCP servers off until it is
   * trusted); the Host asks the user to confirm outside the window first. Throws the Host's message.
   */
  async function trustFolder(sessionId: string): Promise<void> {
    await host().request('sessions.trustFolderForMcp', { id: sessionId })
  }

  function exportTo(path: string, profileIds: string[]) {
    return host().request('mcp.export', { path, profileIds })
  }

  return {
    state,
    profiles,
    loaded,
    pageOpen,
    projectId,
    tests,
    receive,
    load,
    openPage,
    appliesTo,
    onIn,
    save,
    setEnabled,
    remove,
    setProjectEnabled,
    test,
    importSources,
    previewImport,
    applyImport,
    trustFolder,
    exportTo
  }
})

/** A profile as a save request that changes nothing: secrets are sent without a value, which keeps the stored ones. */
export function inputOf(profile: McpProfileView): McpProfileInput {
  const pairs = (list: McpProfileView['env']) =>
    list.map((p) => (p.secret ? { name: p.name, secret: true } : { name: p.name, value: p.value, secret: false }))
  return {
    id: profile.id,
    name: profile.name,
    enabled: profile.enabled,
    scope: profile.scope,
    projectIds: profile.projectIds,
    transport: profile.transport,
    command: profile.command,
    args: profile.args,
    env: pairs(profile.env),
    ...(profile.cwd ? { cwd: profile.cwd } : {}),
    url: profile.url,
    headers: pairs(profile.headers)
  }
}
