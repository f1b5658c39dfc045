// @vitest-environment happy-dom
import './happy-dom-fixes'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils'
import { createPinia, setActivePinia, type Pinia } from 'pinia'
import type { AgentCapabilities } from '../../shared/domain'
import { createThread } from '../../shared/thread'
import ComposerBox from '../../renderer/src/components/session/ComposerBox.vue'
import { CARET_REST_CLASS, CARET_REST_MS, restCaret } from '../../renderer/src/caret-rest'
import { useAgentsStore } from '../../renderer/src/stores/agents'
import { useProjectsStore } from '../../renderer/src/stores/projects'
import { useSessionsStore } from '../../renderer/src/stores/sessions'
import { useThreadsStore } from '../../renderer/src/stores/threads'
import { FakeHost, summaryOf } from './fake-host'

const at = '2026-01-01T00:00:00.000Z'
let fake: FakeHost
let pinia: Pinia
let wrapper: VueWrapper | null = null

function capabilities(image: boolean): AgentCapabilities {
  return {
    protocolVersion: 1,
    loadSession: true,
    prompt: { image, audio: false, embeddedContext: true },
    mcp: { stdio: true, http: false, sse: false },
    session: { list: false, resume: false, close: false, delete: false, fork: false, additionalDirectories: false, systemPrompt: false },
    auth: { logout: false }
  }
}

function setUp(acceptsImages = true): void {
  pinia = createPinia()
  setActivePinia(pinia)
  fake = new FakeHost()
    .answer('files.list', (p: { query: string }) => ({
      files: [
        { path: '/work/app/src/app.ts', relative: 'src/app.ts' },
        { path: '/work/app/src/application.css', relative: 'src/application.css' }
      ].filter((f) => f.relative.includes(p.query)),
      truncated: false
    }))
    .answer('sessions.prompt', () => ({ stopReason: 'end_turn' }))
    .install()
  useProjectsStore().setAll(
    [{ id: 'p1', name: 'app', cwd: '/work/app', createdAt: at }],
    summaryOf([
      {
        id: 's1',
        acpSessionId: 'acp',
        agentId: 'a1',
        projectId: 'p1',
        cwd: '/work/app',
        title: 't',
        titleSource: 'prompt',
        createdAt: at,
        updatedAt: at
      }
    ])
  )
  useAgentsStore().setAll(
    [{ id: 'a1', name: 'Helper', transport: { kind: 'process', command: 'helper', args: [], env: {} } }],
    [{ agentId: 'a1', status: 'ready', stderrTail: '', capabilities: capabilities(acceptsImages) }]
  )
  const sessions = useSessionsStore()
  const thread = createThread()
  thread.commands = [
    { name: 'review', description: 'Review the current changes' },
    { name: 'test', description: 'Run the tests', input: { hint: 'which tests' } }
  ]
  useThreadsStore().threads.s1 = {
    thread,
    nextSeq: 1,
    skippedLines: 0,
    firstSeq: 0,
    firstOffset: 0,
    later: null,
    records: null,
    pages: [],
    loadingEarlier: false,
    loadingLater: false
  }
  sessions.states.s1 = { id: 's1', status: 'ready' }
}

function mountComposer(): VueWrapper {
  wrapper = mount(ComposerBox, {
    props: { sessionId: 's1', agentId: 'a1', status: 'ready' },
    attachTo: document.body,
    global: { plugins: [pinia] }
  })
  return wrapper
}

async function type(w: VueWrapper, text: string): Promise<void> {
  const field = w.find('textarea')
  await field.setValue(text)
  ;(field.element as HTMLTextAreaElement).setSelectionRange(text.length, text.length)
  await field.trigger('input')
  await flushPromises()
}

const options = (w: VueWrapper) => w.findAll('[data-testid=completion-option]').map((o) => o.find('.option-label').text())
const active = (w: VueWrapper) => w.find('[data-testid=completion-option].active .option-label').text()
const draft = (w: VueWrapper) => (w.find('textarea').element as HTMLTextAreaElement).value

beforeEach(() => setUp())
afterEach(() => {
  wrapper?.unmount()
  wrapper = null
  document.body.innerHTML = ''
})

describe('slash commands', () => {
  it('lists the agent’s commands after a / at the start, narrowing as the user types', async () => {
    const w = mountComposer()
    await type(w, '/')
    expect(options(w)).toEqual(['/review', '/test'])
    expect(w.find('[data-testid=completion]').text()).toContain('Review the current changes')
    await type(w, '/te')
    expect(options(w)).toEqual(['/test'])
    expect(w.find('.option-hint').text()).toBe('which tests')
    // Not at the start of the message: no commands.
    await type(w, 'run /te')
    expect(w.find('[data-testid=completion]').exists()).toBe(false)
  })

  it('picks with the arrows and Enter (which then does not send), and Esc closes', async () => {
    const w = mountComposer()
    await type(w, '/')
    expect(active(w)).toBe('/review')
    await w.find('textarea').trigger('keydown', { key: 'ArrowDown' })
    expect(active(w)).toBe('/test')
    await w.find('textarea').trigger('keydown', { key: 'ArrowDown' })
    expect(active(w)).toBe('/review')
    await w.find('textarea').trigger('keydown', { key: 'ArrowUp' })
    await w.find('textarea').trigger('keydown', { key: 'Enter' })
    await flushPromises()
    expect(draft(w)).toBe('/test ')
    expect(fake.calls('sessions.prompt')).toHaveLength(0)
    expect(w.find('[data-testid=completion]').exists()).toBe(false)

    await type(w, '/r')
    expect(options(w)).toEqual(['/review'])
    await w.find('textarea').trigger('keydown', { key: 'Escape' })
    expect(w.find('[data-testid=completion]').exists()).toBe(false)
    // Esc holds while the same trigger is being typed.
    await type(w, '/re')
    expect(w.find('[data-testid=completion]').exists()).toBe(false)
  })

  it('says so when no command matches', async () => {
    const w = mountComposer()
    await type(w, '/zz')
    expect(options(w)).toEqual([])
    expect(w.find('.completion-note').text()).toBe('No command of Helper starts with “/zz”')
  })
})

describe('@-mentions', () => {
  it('lists the project’s files after @, and a chosen file goes with the prompt as a resource link', async () => {
    const w = mountComposer()
    await type(w, 'look at @app')
    expect(fake.calls('files.list').at(-1)).toEqual({ projectId: 'p1', query: 'app', limit: 30 })
    expect(options(w)).toEqual(['src/app.ts', 'src/application.css'])
    await w.find('textarea').trigger('keydown', { key: 'Tab' })
    await flushPromises()
    expect(draft(w)).toBe('look at @src/app.ts ')
    await type(w, 'look at @src/app.ts please')
    await w.find('textarea').trigger('keydown', { key: 'Enter' })
    await flushPromises()
    expect(fake.calls('sessions.prompt')).toEqual([
      {
        id: 's1',
        text: 'look at @src/app.ts please',
        attachments: [{ type: 'resource_link', uri: 'file:///work/app/src/app.ts', name: 'app.ts' }]
      }
    ])
    expect(draft(w)).toBe('')
  })

  it('does not send a mention the user deleted again', async () => {
    const w = mountComposer()
    await type(w, '@app')
    await w.find('[data-testid=completion-option]').trigger('mousedown')
    await flushPromises()
    expect(draft(w)).toBe('@src/app.ts ')
    await type(w, 'never mind')
    await w.find('textarea').trigger('keydown', { key: 'Enter' })
    await flushPromises()
    expect(fake.calls('sessions.prompt')).toEqual([{ id: 's1', text: 'never mind', attachments: [] }])
  })

  it('says why files cannot be listed', async () => {
    fake.answer('files.list', () => {
      throw new Error("No project with id 'p1'")
    })
    const w = mountComposer()
    await type(w, '@x')
    expect(w.find('.completion-note.error').text()).toBe("Could not list the project’s files: No project with id 'p1'")
  })
})

describe('images', () => {
  const png = () => new File([new Uint8Array([137, 80, 78, 71])], 'shot.png', { type: 'image/png' })

  it('attaches a pasted image, with a thumbnail, when the agent accepts images', async () => {
    const w = mountComposer()
    const event = new Event('paste', { bubbles: true, cancelable: true }) as ClipboardEvent
    Object.defineProperty(event, 'clipboardData', { value: { files: [png()] } })
    w.find('textarea').element.dispatchEvent(event)
    await flushPromises()
    await expect.poll(() => w.findAll('[data-testid=attachment]').length).toBe(1)
    expect(w.find('[data-testid=attachment]').text()).toContain('Image: shot.png')
    expect(w.find('.thumb').attributes('src')).toBe('data:image/png;base64,iVBORw==')
  })

  it('refuses a dropped image, saying why, when the agent takes none', async () => {
    wrapper?.unmount()
    setUp(false)
    const w = mountComposer()
    const event = new Event('drop', { bubbles: true, cancelable: true }) as DragEvent
    Object.defineProperty(event, 'dataTransfer', { value: { files: [png()] } })
    w.find('form').element.dispatchEvent(event)
    await flushPromises()
    expect(w.findAll('[data-testid=attachment]')).toHaveLength(0)
    expect(w.find('[data-testid=attach-error]').text()).toBe('Helper does not accept images')
  })
})

describe('the caret at rest', () => {
  afterEach(() => vi.useRealTimers())

  it('stops blinking after five quiet seconds, blinks again at a key or a click, and typing keeps it blinking', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    const root = document.documentElement
    const stop = restCaret()
    const resting = (): boolean => root.classList.contains(CARET_REST_CLASS)
    vi.advanceTimersByTime(CARET_REST_MS - 1)
    expect(resting()).toBe(false)
    vi.advanceTimersByTime(1)
    expect(resting()).toBe(true)
    // A key: blinking again at once, and at rest again only five seconds after the last key.
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'a', bubbles: true }))
    expect(resting()).toBe(false)
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(CARET_REST_MS - 1000)
      expect(resting()).toBe(false)
      document.body.dispatchEvent(new Event('input', { bubbles: true }))
    }
    vi.advanceTimersByTime(CARET_REST_MS - 1)
    expect(resting()).toBe(false)
    vi.advanceTimersByTime(1)
    expect(resting()).toBe(true)
    document.body.dispatchEvent(new Event('pointerdown', { bubbles: true }))
    expect(resting()).toBe(false)
    // Stopped (a window closing): the class goes, and no timer is left behind.
    stop()
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(CARET_REST_MS * 2)
    expect(resting()).toBe(false)
  })
})
