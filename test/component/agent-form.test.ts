// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { AgentDefinition } from '../../shared/agent-definition'
import type { AppInfo } from '../../shared/domain'
import type { AgentTransport } from '../../shared/transport'
import AgentForm from '../../renderer/src/components/agents/AgentForm.vue'
import { useAppStore } from '../../renderer/src/stores/app'
import { FakeHost, firstLoad } from './fake-host'

/**
 * The agent form, one part per transport (components/agents/transport-fields/, chosen from TRANSPORT_FORMS): each
 * kind's fields show when it is chosen, and saving sends that kind's transport as typed. A map entry that points at
 * the wrong part, or a part that builds the wrong transport, fails here.
 */

let fake: FakeHost

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  fake = new FakeHost(
    firstLoad({
      'agents.add': (params: { name: string; transport: AgentTransport }) => ({ id: 'new', name: params.name, transport: params.transport }),
      'agents.update': (params: { agentId: string; name: string; transport: AgentTransport }) => ({
        id: params.agentId,
        name: params.name,
        transport: params.transport
      })
    })
  ).install()
})

function mountForm(agent: AgentDefinition | null = null): VueWrapper {
  return mount(AgentForm, { props: { agent }, attachTo: document.body })
}

const field = (form: VueWrapper, id: string) => form.get(`[data-testid=${id}]`)

async function choose(form: VueWrapper, testId: string): Promise<void> {
  await field(form, testId).setValue(true)
}

async function save(form: VueWrapper): Promise<unknown> {
  await form.get('form').trigger('submit')
  await flushPromises()
  expect(form.find('[data-testid=agent-form-error]').exists() ? form.get('[data-testid=agent-form-error]').text() : '').toBe('')
  return fake.sent('agents.add').at(-1) ?? fake.sent('agents.update').at(-1)
}

describe('the agent form, one part per transport', () => {
  it('runs a command on this computer: the line pasted whole, the folder and variables, a secret', async () => {
    const form = mountForm()
    expect((field(form, 'agent-place-local').element as HTMLInputElement).checked).toBe(true)
    expect(form.find('[data-testid=agent-form-url]').exists()).toBe(false)
    expect(form.find('[data-testid=agent-form-ssh-host]').exists()).toBe(false)
    await field(form, 'agent-form-name').setValue('Mine')
    await field(form, 'agent-form-command-line').setValue('FOO=1 npx -y "@scope/agent@1.2" --acp ""')
    expect(form.findAll('[data-testid=split-arg]').map((a) => a.text())).toEqual(['-y', '@scope/agent@1.2', '--acp', ''])
    await field(form, 'agent-form-cwd').setValue(' /home/me/agents ')
    await field(form, 'env-add').trigger('click')
    await form.findAll('[data-testid=env-name]')[1].setValue('API_KEY')
    await form.findAll('[data-testid=env-secret]')[1].setValue(true)
    await form.findAll('[data-testid=env-value]')[1].setValue('s3cret')

    expect(await save(form)).toEqual({
      name: 'Mine',
      transport: {
        kind: 'process',
        command: 'npx',
        // The line's own arguments, the empty one kept.
        args: ['-y', '@scope/agent@1.2', '--acp', ''],
        cwd: '/home/me/agents',
        env: { FOO: '1' },
        secretEnv: { API_KEY: 's3cret' }
      }
    })
  })

  it('runs a command over SSH: the host, port and files, then the command typed before SSH was chosen', async () => {
    const form = mountForm()
    await field(form, 'agent-form-name').setValue('On devbox')
    // Typed under "this computer": still there once SSH is chosen (the command block is one draft).
    await field(form, 'agent-form-command').setValue('my-agent')
    await choose(form, 'agent-place-ssh')
    expect((field(form, 'agent-form-command').element as HTMLInputElement).value).toBe('my-agent')
    await field(form, 'agent-form-ssh-host').setValue('me@devbox')
    await field(form, 'agent-form-ssh-port').setValue('x22')
    await field(form, 'agent-form-ssh-key').setValue('/home/me/.ssh/id_devbox ')
    await field(form, 'agent-form-ssh-known-hosts').setValue('')
    await field(form, 'agent-form-args').setValue('--acp\n\n--verbose')
    await form.get('form').trigger('submit')
    await flushPromises()
    expect(field(form, 'agent-form-error').text()).toBe("The port is a number, like 22 (got 'x22')")
    expect(fake.sent('agents.add')).toEqual([])

    await field(form, 'agent-form-ssh-port').setValue('2222')
    expect(await save(form)).toEqual({
      name: 'On devbox',
      transport: {
        kind: 'ssh',
        destination: 'me@devbox',
        port: 2222,
        identityFile: '/home/me/.ssh/id_devbox',
        knownHostsFile: '',
        command: 'my-agent',
        args: ['--acp', '--verbose'],
        cwd: '',
        env: {},
        secretEnv: {}
      }
    })
  })

  it('reaches an agent over the network: its address, a header kept secret, a CA file; no command', async () => {
    const form = mountForm()
    await field(form, 'agent-form-name').setValue('Remote')
    await choose(form, 'agent-place-remote')
    expect(form.find('[data-testid=agent-form-command]').exists()).toBe(false)
    expect(field(form, 'agent-form-intro').text()).toContain('over WebSocket or Streamable HTTP')
    await field(form, 'agent-form-url').setValue('wss://agents.example.com/acp')
    await field(form, 'header-add').trigger('click')
    await field(form, 'header-name').setValue('Authorization')
    await field(form, 'header-value').setValue('Bearer t0ken')
    await field(form, 'agent-form-ca').setValue(' /etc/ca.pem')

    expect(await save(form)).toEqual({
      name: 'Remote',
      transport: { kind: 'network', url: 'wss://agents.example.com/acp', headers: { Authorization: 'Bearer t0ken' }, caFile: '/etc/ca.pem' }
    })
  })

  it('edits an agent over SSH as it is saved: its fields filled in, a stored secret kept', async () => {
    const agent: AgentDefinition = {
      id: 'a1',
      name: 'On devbox',
      transport: {
        kind: 'ssh',
        destination: 'me@devbox',
        port: 2200,
        identityFile: '/k',
        command: 'agent',
        args: ['--acp'],
        env: { MODE: 'fast' },
        secretEnv: ['TOKEN'],
        cwd: '/srv'
      }
    }
    const form = mountForm(agent)
    expect((field(form, 'agent-place-ssh').element as HTMLInputElement).checked).toBe(true)
    // A new agent's command line only.
    expect(form.find('[data-testid=agent-form-command-line]').exists()).toBe(false)
    expect((field(form, 'agent-form-ssh-port').element as HTMLInputElement).value).toBe('2200')
    expect(form.findAll('[data-testid=env-value]')[1].attributes('placeholder')).toBe('•••• set (type to replace)')

    expect(await save(form)).toEqual({
      agentId: 'a1',
      name: 'On devbox',
      transport: {
        kind: 'ssh',
        destination: 'me@devbox',
        port: 2200,
        identityFile: '/k',
        knownHostsFile: '',
        command: 'agent',
        args: ['--acp'],
        cwd: '/srv',
        env: { MODE: 'fast' },
        secretEnv: { TOKEN: null }
      }
    })
  })

  it('labels each field and ties its hint and error to it; says when secrets are kept in memory only', async () => {
    const info: AppInfo = { version: 'test', dataDir: '/data', warnings: [], nativeFolderPicker: false, secretsPersistent: false }
    useAppStore().info = info
    const form = mountForm()
    const line = field(form, 'agent-form-command-line')
    expect(form.get(`label[for=${line.attributes('id')}]`).text()).toBe('Command line')
    await line.setValue('my-agent | tee log')
    const error = field(form, 'agent-form-command-line-error')
    expect(error.text()).toContain("'|' needs a shell")
    const describedBy = line.attributes('aria-describedby')!.split(' ')
    expect(describedBy).toContain(error.attributes('id'))
    expect(form.get(`#${describedBy[0]}`).text()).toContain('Paste the line')

    expect(form.text()).not.toContain('keeps secrets in memory only')
    await field(form, 'env-add').trigger('click')
    await field(form, 'env-secret').setValue(true)
    expect(form.text()).toContain('keeps secrets in memory only')
    await choose(form, 'agent-place-remote')
    expect(form.text()).not.toContain('keeps secrets in memory only')
    await field(form, 'header-add').trigger('click')
    expect(form.text()).toContain('keeps secrets in memory only')
  })
})
