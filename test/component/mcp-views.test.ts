// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { Project, SessionRecord } from '../../shared/domain'
import type { McpProfileView, McpState } from '../../shared/mcp'
import SessionMcp from '../../renderer/src/components/mcp/SessionMcp.vue'
import McpProfileRow from '../../renderer/src/components/mcp/McpProfileRow.vue'
import SidebarNav from '../../renderer/src/components/sidebar/SidebarNav.vue'
import { listenToHost } from '../../renderer/src/event-router'
import { useAppStore } from '../../renderer/src/stores/app'
import { useMcpStore } from '../../renderer/src/stores/mcp'
import { useNoticesStore } from '../../renderer/src/stores/notices'
import { useProjectsStore } from '../../renderer/src/stores/projects'
import { FakeHost, firstLoad } from './fake-host'

/** What the window says of MCP servers: the sidebar's count, a session's servers, a server's one switch. */

const at = '2026-01-01T00:00:00.000Z'
const project: Project = { id: 'p1', name: 'shop', cwd: '/work/shop', createdAt: at }

function profile(id: string, name: string, extra: Partial<McpProfileView> = {}): McpProfileView {
  return {
    id,
    name,
    version: 1,
    enabled: true,
    scope: 'global',
    projectIds: [],
    transport: 'http',
    command: '',
    args: [],
    env: [],
    url: `https://${name}.example/mcp`,
    headers: [],
    createdAt: at,
    updatedAt: at,
    missingSecrets: [],
    ...extra
  }
}

function state(profiles: McpProfileView[], disabled: Record<string, string[]> = {}): McpState {
  return { profiles, disabled, secretsPersistent: true }
}

let fake: FakeHost

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  fake = new FakeHost(
    firstLoad({
      'projects.list': () => [project],
      'mcp.list': () => state([profile('m1', 'docs'), profile('m2', 'search')])
    })
  ).install()
})

describe('the sidebar', () => {
  it('counts the MCP servers from the first load, and follows mcp.changed, without the MCP page being opened', async () => {
    const app = useAppStore()
    // Connected: a failed request of the first load would be reported.
    app.setConnection('connected')
    listenToHost()
    await app.load()
    expect(useNoticesStore().errors).toEqual([])
    const nav = mount(SidebarNav)
    await flushPromises()
    expect(nav.find('[data-testid=open-mcp] .count').text()).toBe('2')
    expect(fake.sent('mcp.list')).toHaveLength(1)

    fake.push([{ type: 'mcp.changed', payload: state([profile('m1', 'docs'), profile('m2', 'search'), profile('m3', 'db')]) }])
    await flushPromises()
    expect(nav.find('[data-testid=open-mcp] .count').text()).toBe('3')
  })
})

describe('a session’s MCP servers', () => {
  const session: SessionRecord = {
    id: 's1',
    acpSessionId: 'a1',
    agentId: 'claude',
    projectId: 'p1',
    cwd: '/work/shop',
    title: 'Fix it',
    titleSource: 'prompt',
    createdAt: at,
    updatedAt: at,
    mcpServers: [
      { profileId: 'm1', version: 1, name: 'docs', transport: 'http' },
      { profileId: 'm2', version: 1, name: 'search', transport: 'http' },
      { profileId: 'm3', version: 1, name: 'db', transport: 'http' }
    ],
    mcpLeftOut: [
      { profileId: 'm4', version: 1, name: 'broken', transport: 'http', reason: 'its last Test connection failed (HTTP 401): test it again' }
    ]
  }

  it('marks each given server by its last test (✓ only when it connected), and says why one was left out', async () => {
    useMcpStore().receive(
      state([
        profile('m1', 'docs', { lastTest: { ok: true, at } }),
        profile('m2', 'search'),
        profile('m3', 'db', { lastTest: { ok: false, at, error: 'Connection refused at https://db.example/mcp' } })
      ])
    )
    const view = mount(SessionMcp, { props: { session } })
    const given = view.findAll('[data-testid=session-mcp-given]')
    expect(given.map((li) => [li.attributes('data-test'), li.find('.mark').text()])).toEqual([
      ['ok', '✓'],
      ['untested', '○'],
      ['failed', '✕']
    ])
    expect(given[2].text()).toContain('its last test failed: Connection refused at https://db.example/mcp')
    expect(view.find('[data-testid=session-mcp-left-out]').text()).toContain('broken HTTP · v1 left out: its last Test connection failed (HTTP 401)')
  })
})

describe('a server on the MCP page', () => {
  it('has one switch: on or off everywhere, or, with a project picked, on or off in that project', async () => {
    fake.answer('mcp.save', (input) => ({ ...profile('m1', 'docs'), ...(input as object) }))
    fake.answer('mcp.setProjectEnabled', () => ({}))
    useProjectsStore().setAll([project], [])
    const mcp = useMcpStore()
    mcp.receive(state([profile('m1', 'docs', { lastTest: { ok: false, at, error: 'HTTP 401' } })]))
    const row = mount(McpProfileRow, { props: { profile: mcp.profiles[0] } })
    const switches = () => row.findAll('input[type=checkbox]')
    expect(switches()).toHaveLength(1)
    expect(switches()[0].attributes('aria-label')).toBe('docs on')
    expect(row.find('[data-testid=mcp-last-test]').text()).toBe('✕ Test failed')
    expect(row.find('[data-testid=mcp-left-out-note]').exists()).toBe(true)

    await switches()[0].setValue(false)
    expect(fake.sent('mcp.save')).toEqual([expect.objectContaining({ id: 'm1', enabled: false })])

    // Off everywhere: with a project picked the switch is off and says where to switch it on.
    mcp.receive(state([profile('m1', 'docs', { enabled: false })]))
    mcp.projectId = 'p1'
    await row.setProps({ profile: mcp.profiles[0] })
    expect(switches()).toHaveLength(1)
    expect(switches()[0].attributes('aria-label')).toBe('docs on in shop')
    expect((switches()[0].element as HTMLInputElement).checked).toBe(false)
    expect((switches()[0].element as HTMLInputElement).disabled).toBe(true)

    mcp.receive(state([profile('m1', 'docs')]))
    await row.setProps({ profile: mcp.profiles[0] })
    expect((switches()[0].element as HTMLInputElement).checked).toBe(true)
    await switches()[0].setValue(false)
    expect(fake.sent('mcp.setProjectEnabled')).toEqual([{ projectId: 'p1', profileId: 'm1', enabled: false }])

    // Switched off in that project (the Host's answer comes as mcp.changed): the same switch shows it.
    mcp.receive(state([profile('m1', 'docs')], { p1: ['m1'] }))
    await row.setProps({ profile: mcp.profiles[0] })
    expect((switches()[0].element as HTMLInputElement).checked).toBe(false)
    expect(row.find('[data-testid=mcp-last-test]').text()).toBe('Not tested')
  })
})
