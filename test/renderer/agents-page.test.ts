// @vitest-environment happy-dom
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { RequestParams } from '../../shared/contract'
import type { AgentPresetView, AgentRuntimeState } from '../../shared/domain'
import type { AgentDefinition } from '../../shared/agent-definition'
import { transportInputSchema, type TransportInput } from '../../shared/agent-requests'
import type { ProcessTransport } from '../../shared/transport'
import AgentsPage from '../../renderer/src/components/agents/AgentsPage.vue'
import { useAgentsStore } from '../../renderer/src/stores/agents'
import { routeEvents } from '../../renderer/src/event-router'
import { useProjectsStore } from '../../renderer/src/stores/projects'
import { useSessionsStore } from '../../renderer/src/stores/sessions'
import { useViewStore } from '../../renderer/src/stores/view'
import { FakeHost, summaryOf } from './fake-host'

/** The Agents page and its store against a fake Host: what is sent, and what is shown. */

const ready: AgentRuntimeState = {
  agentId: 'claude-code',
  status: 'ready',
  stderrTail: '',
  pid: 4242,
  agentInfo: { name: 'claude-agent-acp', title: 'Claude Code', version: '0.49.0' },
  capabilities: {
    protocolVersion: 1,
    loadSession: true,
    prompt: { image: true, audio: false, embeddedContext: true },
    mcp: { stdio: true, http: true, sse: false },
    session: { list: true, resume: true, close: false, delete: false, fork: false, additionalDirectories: false, systemPrompt: false },
    auth: { logout: true }
  },
  authMethods: [{ id: 'claude-login', name: 'Log in with Claude', type: 'agent' }]
}

const claude: AgentDefinition = {
  id: 'claude-code',
  name: 'Claude Code',
  transport: { kind: 'process', command: 'claude-agent-acp', args: [], env: {}, secretEnv: ['ANTHROPIC_API_KEY'] }
}
const presets: AgentPresetView[] = [
  { id: 'claude-code', name: 'Claude Code', command: 'claude-agent-acp', args: [], installed: true, installHint: 'npm install -g x', added: true },
  {
    id: 'codex',
    name: 'Codex',
    command: 'npx',
    args: ['-y', '@agentclientprotocol/codex-acp'],
    installed: false,
    installHint: 'npm install -g @agentclientprotocol/codex-acp',
    added: false
  }
]

let fake: FakeHost

/** What the form sent for a process agent (the only kind these tests add). */
function processInput(p: object): Extract<TransportInput, { kind: 'process' }> {
  const transport = transportInputSchema.parse('transport' in p ? p.transport : undefined)
  if (transport.kind !== 'process') throw new Error('expected a process agent')
  return transport
}

/** The definition the Host keeps for it. */
function definedProcess({ secretEnv, cwd, ...t }: Extract<TransportInput, { kind: 'process' }>): ProcessTransport {
  return { ...t, ...(cwd ? { cwd } : {}), secretEnv: Object.keys(secretEnv) }
}

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  fake = new FakeHost({
    'agents.presets': () => presets,
    'agents.log': ({ agentId }) => ({ agentId, path: `/data/logs/${agentId}.log`, text: 'booting\nready\n', truncated: false }),
    'agents.add': (p: RequestParams<'agents.add'>) => {
      const t = processInput(p)
      // The Host's own check of the working folder (electron/host/agents/definitions.ts), as it answers.
      const cwd = t.cwd ?? ''
      if (cwd && !cwd.startsWith('/')) throw new Error(`The working folder must be an absolute path, like /home/you/code (got '${cwd}')`)
      return { id: 'my-agent', name: p.name, transport: definedProcess(t) }
    },
    'agents.update': (p: RequestParams<'agents.update'>) => ({
      id: p.agentId,
      name: p.name,
      transport: definedProcess(processInput(p))
    }),
    'agents.addPreset': ({ presetId }) => ({
      id: presetId,
      name: 'Codex',
      transport: { kind: 'process', command: 'npx', args: [], env: {} },
      installHint: 'npm install -g @agentclientprotocol/codex-acp'
    }),
    'agents.restart': ({ agentId }) => ({ ...ready, agentId, pid: 5151 }),
    'agents.remove': () => {
      throw new Error('Claude Code has 2 sessions; delete them first to remove the agent')
    }
  }).install()
  useAgentsStore().setAll([claude], [ready])
})

async function mountPage() {
  const wrapper = mount(AgentsPage, { attachTo: document.body })
  await flushPromises()
  return wrapper
}

const byTestId = (wrapper: ReturnType<typeof mount>, id: string) => wrapper.find(`[data-testid="${id}"]`)

describe('the Agents page', () => {
  it('shows an agent’s version, protocol, capabilities and secrets (never their values), and its log', async () => {
    const wrapper = await mountPage()
    expect(byTestId(wrapper, 'agent-details-name').text()).toBe('Claude Code')
    expect(byTestId(wrapper, 'agent-info').text()).toBe('Claude Code version 0.49.0')
    expect(byTestId(wrapper, 'agent-protocol').text()).toBe('ACP version 1')
    expect(byTestId(wrapper, 'agent-cwd').text()).toBe('your home folder')
    expect(byTestId(wrapper, 'agent-pid').text()).toBe('pid 4242')
    const supported = wrapper.findAll('[data-supported=true]').map((li) => li.attributes('data-capability'))
    expect(supported).toEqual(['load', 'resume', 'list', 'image', 'embedded', 'mcp-http', 'logout'])
    expect(byTestId(wrapper, 'agent-secret-var').text()).toBe('ANTHROPIC_API_KEY •••• set')
    expect(byTestId(wrapper, 'agent-logout').exists()).toBe(true)
    expect(byTestId(wrapper, 'agent-log').text()).toBe('booting\nready')
    expect(fake.sent('agents.log')).toEqual([{ agentId: 'claude-code' }])
    // Presets already set up are not offered again; the others say how to install them.
    expect(wrapper.findAll('[data-testid=preset-row]').map((r) => r.text())).toEqual([
      expect.stringContaining('Codexruns through npx (downloaded on first use)npm install -g @agentclientprotocol/codex-acp')
    ])
  })

  it('adds a custom agent: arguments one per line, plain and secret variables', async () => {
    const wrapper = await mountPage()
    await byTestId(wrapper, 'add-agent').trigger('click')
    await byTestId(wrapper, 'agent-form-name').setValue('My agent')
    await byTestId(wrapper, 'agent-form-command').setValue('/opt/agent/bin/agent')
    await byTestId(wrapper, 'agent-form-args').setValue('--acp\n--model\nbig one\n')
    expect(byTestId(wrapper, 'agent-form-cwd').attributes('placeholder')).toBe('Your home folder')
    await byTestId(wrapper, 'agent-form-cwd').setValue('  /home/me/agents ')
    await byTestId(wrapper, 'env-add').trigger('click')
    await byTestId(wrapper, 'env-add').trigger('click')
    const names = wrapper.findAll('[data-testid=env-name]')
    const values = wrapper.findAll('[data-testid=env-value]')
    await names[0].setValue('LOG_LEVEL')
    await values[0].setValue('debug')
    await names[1].setValue('API_KEY')
    await wrapper.findAll('[data-testid=env-secret]')[1].setValue(true)
    // A secret without a value is refused before anything is sent.
    await byTestId(wrapper, 'agent-form').trigger('submit')
    expect(byTestId(wrapper, 'agent-form-error').text()).toBe('API_KEY is marked secret: type its value')
    expect(fake.sent('agents.add')).toEqual([])
    expect(values[1].attributes('type')).toBe('password')
    await values[1].setValue('k-123')
    await byTestId(wrapper, 'agent-form').trigger('submit')
    await flushPromises()
    expect(fake.sent('agents.add')).toEqual([
      {
        name: 'My agent',
        transport: {
          kind: 'process',
          command: '/opt/agent/bin/agent',
          args: ['--acp', '--model', 'big one'],
          cwd: '/home/me/agents',
          env: { LOG_LEVEL: 'debug' },
          secretEnv: { API_KEY: 'k-123' }
        }
      }
    ])
    // The new agent is selected, where it starts and its secret shown.
    expect(byTestId(wrapper, 'agent-details-name').text()).toBe('My agent')
    expect(byTestId(wrapper, 'agent-cwd').text()).toBe('/home/me/agents')
    expect(byTestId(wrapper, 'agent-secret-var').text()).toBe('API_KEY •••• set')
    expect(wrapper.html()).not.toContain('k-123')
  })

  it('shows the Host’s refusal of a working folder in the form, keeping what was typed', async () => {
    const wrapper = await mountPage()
    await byTestId(wrapper, 'add-agent').trigger('click')
    await byTestId(wrapper, 'agent-form-name').setValue('Relative')
    await byTestId(wrapper, 'agent-form-command').setValue('./agent')
    await byTestId(wrapper, 'agent-form-cwd').setValue('code/agents')
    await byTestId(wrapper, 'agent-form').trigger('submit')
    await flushPromises()
    expect(byTestId(wrapper, 'agent-form-error').text()).toBe("The working folder must be an absolute path, like /home/you/code (got 'code/agents')")
    expect((byTestId(wrapper, 'agent-form-cwd').element as HTMLInputElement).value).toBe('code/agents')
    expect((byTestId(wrapper, 'agent-form-command').element as HTMLInputElement).value).toBe('./agent')
    // Fixed, it is saved.
    await byTestId(wrapper, 'agent-form-cwd').setValue('/home/me/agents')
    await byTestId(wrapper, 'agent-form').trigger('submit')
    await flushPromises()
    expect(fake.sent('agents.add')).toEqual([
      expect.objectContaining({ transport: expect.objectContaining({ cwd: 'code/agents' }) }),
      expect.objectContaining({ transport: expect.objectContaining({ cwd: '/home/me/agents' }) })
    ])
    expect(byTestId(wrapper, 'agent-cwd').text()).toBe('/home/me/agents')
  })

  it('edits an agent keeping its stored secret, and says to restart the running agent', async () => {
    const wrapper = await mountPage()
    await byTestId(wrapper, 'agent-edit').trigger('click')
    const value = byTestId(wrapper, 'env-value')
    expect((value.element as HTMLInputElement).value).toBe('')
    expect(value.attributes('placeholder')).toBe('•••• set (type to replace)')
    await byTestId(wrapper, 'agent-form-args').setValue('--verbose')
    await byTestId(wrapper, 'agent-form').trigger('submit')
    await flushPromises()
    expect(fake.sent('agents.update')).toEqual([
      {
        agentId: 'claude-code',
        name: 'Claude Code',
        transport: { kind: 'process', command: 'claude-agent-acp', args: ['--verbose'], cwd: '', env: {}, secretEnv: { ANTHROPIC_API_KEY: null } }
      }
    ])
    expect(byTestId(wrapper, 'agent-restart-to-apply').exists()).toBe(true)
    await byTestId(wrapper, 'agent-restart').trigger('click')
    await flushPromises()
    expect(fake.sent('agents.restart')).toEqual([{ agentId: 'claude-code' }])
    expect(byTestId(wrapper, 'agent-pid').text()).toBe('pid 5151')
    expect(byTestId(wrapper, 'agent-restart-to-apply').exists()).toBe(false)
  })

  it('asks before restarting an agent that is working, and shows why a removal was refused', async () => {
    useProjectsStore().setAll(
      [],
      summaryOf([
        {
          id: 's1',
          acpSessionId: 'a',
          agentId: 'claude-code',
          projectId: 'p',
          cwd: '/p',
          title: 'Busy',
          titleSource: 'user',
          createdAt: '',
          updatedAt: ''
        }
      ])
    )
    useSessionsStore().receiveState({ id: 's1', status: 'running' })
    const wrapper = await mountPage()
    await byTestId(wrapper, 'agent-restart').trigger('click')
    expect(wrapper.text()).toContain('1 session is working with Claude Code')
    expect(fake.sent('agents.restart')).toEqual([])
    await byTestId(wrapper, 'agent-restart-confirm').trigger('click')
    await flushPromises()
    expect(fake.sent('agents.restart')).toHaveLength(1)

    useSessionsStore().receiveState({ id: 's1', status: 'idle' })
    useProjectsStore().setAll([], [])
    await byTestId(wrapper, 'agent-remove').trigger('click')
    await byTestId(wrapper, 'agent-remove-confirm').trigger('click')
    await flushPromises()
    expect(byTestId(wrapper, 'agent-error').text()).toBe('Claude Code has 2 sessions; delete them first to remove the agent')
    expect(useAgentsStore().definitions).toHaveLength(1)
  })

  it('adds a preset, which then is no longer offered', async () => {
    const wrapper = await mountPage()
    await byTestId(wrapper, 'add-preset-codex').trigger('click')
    await flushPromises()
    expect(fake.sent('agents.addPreset')).toEqual([{ presetId: 'codex' }])
    expect(byTestId(wrapper, 'agent-details-name').text()).toBe('Codex')
    expect(wrapper.findAll('[data-testid=preset-row]')).toHaveLength(0)
    expect(wrapper.text()).toContain('Every preset is set up.')
  })
})

describe('the agents and view stores', () => {
  it('take the agent list from agents.changed and app commands from the menu', async () => {
    const agents = useAgentsStore()
    const view = useViewStore()
    await agents.loadPresets()
    routeEvents([
      { type: 'agents.changed', payload: [claude, { id: 'codex', name: 'Codex', transport: { kind: 'process', command: 'npx', args: [], env: {} } }] }
    ])
    expect(agents.definitions.map((a) => a.id)).toEqual(['claude-code', 'codex'])
    expect(agents.presets.find((p) => p.id === 'codex')?.added).toBe(true)

    const { onAppCommand } = await import('../../renderer/src/commands')
    const off = onAppCommand('agents', () => view.show('agents'))
    routeEvents([{ type: 'app.command', payload: { command: 'agents' } }])
    expect(view.page).toBe('agents')
    off()
  })

  it('go back to the conversations when a session is opened', async () => {
    fake = new FakeHost({
      'sessions.open': ({ id }) => ({
        record: { id, sessionId: 'x', agentId: 'claude-code', projectId: 'p', cwd: '/p', title: 'T', createdAt: '', updatedAt: '' },
        state: { id, status: 'idle' },
        records: [],
        nextSeq: 1,
        skippedLines: 0
      })
    }).install()
    const view = useViewStore()
    view.show('agents')
    await useSessionsStore().open('s1')
    expect(view.page).toBe('sessions')
  })
})
