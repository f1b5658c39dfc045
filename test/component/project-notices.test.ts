// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { AgentRuntimeState, Project } from '../../shared/domain'
import type { AgentDefinition } from '../../shared/agent-definition'
import ProjectBlock from '../../renderer/src/components/sidebar/ProjectBlock.vue'
import { useAgentsStore } from '../../renderer/src/stores/agents'
import { useProjectsStore } from '../../renderer/src/stores/projects'
import { FakeHost } from './fake-host'

/** What is said under a project: each line can be put away, and goes by itself once its cause has. */

const at = '2026-01-01T00:00:00.000Z'
const project: Project = { id: 'p1', name: 'shop', cwd: '/work/shop', createdAt: at }
const agent = (id: string, name: string): AgentDefinition => ({ id, name, transport: { kind: 'process', command: id, args: [], env: {} } })
const state = (agentId: string, extra: Partial<AgentRuntimeState> = {}): AgentRuntimeState => ({
  agentId,
  status: 'stopped',
  stderrTail: '',
  ...extra
})

let fake: FakeHost

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  fake = new FakeHost({
    'sessions.new': () => {
      throw new Error('Claude Code exited with code 1 before it answered: no credentials')
    }
  }).install()
  useProjectsStore().setAll([project], [])
})

afterEach(() => {
  vi.useRealTimers()
})

function mountBlock(of: Project = project) {
  return mount(ProjectBlock, { props: { project: of, index: 0, count: 1 }, attachTo: document.body })
}
const find = (wrapper: ReturnType<typeof mountBlock>, id: string) => wrapper.find(`[data-testid="${id}"]`)
/** Import, from the project's menu (which opens in the page's body). */
async function importFromMenu(block: ReturnType<typeof mountBlock>): Promise<void> {
  await find(block, 'project-menu').trigger('click')
  await flushPromises()
  document.querySelector<HTMLButtonElement>('[data-testid="menu-import"]')!.click()
  await flushPromises()
}

describe('notices under a project', () => {
  it('a failed start can be dismissed, and goes once the agent runs, or another agent is picked', async () => {
    const agents = useAgentsStore()
    agents.setAll([agent('claude', 'Claude Code'), agent('gemini', 'Gemini CLI')], [state('claude', { status: 'error' })])
    const block = mountBlock()
    await find(block, 'new-session').trigger('click')
    await flushPromises()
    expect(find(block, 'new-session-error').text()).toContain('no credentials')

    await find(block, 'new-session-error-dismiss').trigger('click')
    expect(find(block, 'new-session-error').exists()).toBe(false)

    // Again; then the agent is started from the Agents page and comes up: the failure is gone.
    await find(block, 'new-session').trigger('click')
    await flushPromises()
    expect(find(block, 'new-session-error').exists()).toBe(true)
    agents.receiveState(state('claude', { status: 'starting' }))
    await flushPromises()
    expect(find(block, 'new-session-error').exists()).toBe(true)
    agents.receiveState(state('claude', { status: 'ready' }))
    await flushPromises()
    expect(find(block, 'new-session-error').exists()).toBe(false)

    // A failure said of one agent is not left under another.
    await find(block, 'new-session').trigger('click')
    await flushPromises()
    expect(find(block, 'new-session-error').exists()).toBe(true)
    await find(block, 'new-session-menu').trigger('click')
    document.body.querySelector<HTMLElement>('[data-testid=new-session-agent-option][data-agent-id=gemini]')?.click()
    await flushPromises()
    expect(find(block, 'new-session-split').attributes('data-choice')).toBe('agent:gemini')
    expect(find(block, 'new-session-error').exists()).toBe(false)
    expect(fake.sent('sessions.new')).toHaveLength(3)
  })

  it('"not installed" can be put away for that agent, and goes once the agent is found', async () => {
    const agents = useAgentsStore()
    agents.setAll([agent('codex', 'Codex')], [state('codex', { installed: false, message: 'Codex is not installed: npm install -g codex-acp' })])
    const block = mountBlock()
    expect(find(block, 'agent-not-installed').text()).toBe('Codex is not installed: npm install -g codex-acp')
    await find(block, 'agent-not-installed-dismiss').trigger('click')
    expect(find(block, 'agent-not-installed').exists()).toBe(false)

    // Scrolled out of view and back (the sidebar is virtualised): it stays put away.
    block.unmount()
    expect(find(mountBlock(), 'agent-not-installed').exists()).toBe(false)

    const other = mountBlock({ ...project, id: 'p2', name: 'other', cwd: '/work/other' })
    expect(find(other, 'agent-not-installed').exists()).toBe(true)
    agents.receiveState(state('codex', { installed: true, status: 'ready' }))
    await flushPromises()
    expect(find(other, 'agent-not-installed').exists()).toBe(false)
  })

  it('what an import found goes after a while, or at once when dismissed', async () => {
    vi.useFakeTimers()
    const agents = useAgentsStore()
    const caps = {
      protocolVersion: 1,
      loadSession: true,
      prompt: { image: false, audio: false, embeddedContext: false },
      mcp: { stdio: true, http: false, sse: false },
      session: { list: true, resume: false, close: false, delete: false, fork: false, additionalDirectories: false, systemPrompt: false },
      auth: { logout: false }
    }
    agents.setAll([agent('claude', 'Claude Code')], [state('claude', { status: 'ready', capabilities: caps })])
    fake.answer('sessions.import', () => ({ imported: [] }))
    const block = mountBlock()
    await importFromMenu(block)
    expect(find(block, 'import-note').text()).toBe('No new sessions to import.')
    vi.advanceTimersByTime(11_000)
    await flushPromises()
    expect(find(block, 'import-note').exists()).toBe(false)

    await importFromMenu(block)
    await find(block, 'import-note-dismiss').trigger('click')
    expect(find(block, 'import-note').exists()).toBe(false)
  })
})
