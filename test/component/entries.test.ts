// @vitest-environment happy-dom
import './happy-dom-fixes'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { computed, defineComponent, h } from 'vue'
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils'
import type { ThreadEntry, ToolCallEntry, TerminalView } from '../../shared/thread'
import EntryView from '../../renderer/src/components/thread/EntryView.vue'
import ElicitationCard from '../../renderer/src/components/session/ElicitationCard.vue'
import PermissionCard from '../../renderer/src/components/session/PermissionCard.vue'
import { openPathKey, pendingToolCallKey, sessionRootKey, terminalsKey } from '../../renderer/src/components/thread/keys'
import { createPinia, setActivePinia } from 'pinia'
import { opened as openedInView } from '../../renderer/src/view-state'

/** xterm.js needs a real layout engine; its own behaviour is covered in Chromium (test/e2e/thread.test.ts). */
const TerminalStub = defineComponent({
  props: { output: { type: String, required: true } },
  setup: (props) => () => h('div', { class: 'terminal-stub' }, props.output)
})

const opened: { path: string; line?: number | null }[] = []
let terminals: Record<string, TerminalView> = {}
let pending: string | null = null

function mountEntry(entry: ThreadEntry) {
  return mount(EntryView, {
    props: { entry },
    attachTo: document.body,
    global: {
      stubs: { TerminalOutput: TerminalStub },
      provide: {
        [openPathKey as symbol]: async (path: string, line?: number | null) => {
          opened.push({ path, line })
          return 'Path copied'
        },
        [terminalsKey as symbol]: computed(() => terminals),
        [sessionRootKey as symbol]: computed(() => '/work/app'),
        [pendingToolCallKey as symbol]: computed(() => pending)
      }
    }
  })
}

const writeText = vi.fn(async (_text: string) => undefined)

beforeEach(() => {
  opened.length = 0
  terminals = {}
  pending = null
  // Unified until the reader picks side by side (a setting, kept by the Host: none here).
  localStorage.clear()
  setActivePinia(createPinia())
  openedInView.clear()
  writeText.mockClear()
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
})
afterEach(() => {
  document.body.innerHTML = ''
})

describe('messages', () => {
  it('shows an agent message as sanitised markdown, with highlighted code that copies', async () => {
    const wrapper = mountEntry({
      kind: 'assistant',
      id: 'a1',
      text: '**Fixed** it <img src=x onerror="alert(1)"> [docs](javascript:alert(1))\n\n```python\ndef answer():\n    return 42\n```'
    })
    expect(wrapper.find('strong').text()).toBe('Fixed')
    expect(wrapper.find('img').exists()).toBe(false)
    expect(wrapper.find('[onerror]').exists()).toBe(false)
    expect(wrapper.find('a').exists()).toBe(false)
    expect(wrapper.text()).toContain('<img src=x onerror="alert(1)">')
    // Plain at once; highlighted once Python's highlighting has loaded (highlight.ts).
    await vi.waitFor(() => expect(wrapper.find('.hljs-keyword').text()).toBe('def'), { timeout: 30_000 })
    expect(wrapper.find('.code-lang').text()).toBe('python')

    await wrapper.find('.code-copy').trigger('click')
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith('def answer():\n    return 42\n')
    expect(wrapper.find('.code-copy').text()).toBe('Copied')
  })

  it('shows a streamed answer, rendered in parts as it grew, as the whole answer rendered at once', async () => {
    const text = [
      'Here is the plan:',
      '1. read `app.ts`\n2. fix the **bug**\n\n3. run the tests',
      '| file | change |\n|---|---|\n| app.ts | one line |',
      '```ts\nconst answer = 42\n\nexport default answer\n```',
      '> Done.\nAll green.',
      'Setext title\n---',
      'See [app.ts](file:///work/app/src/app.ts) and https://example.com.'
    ].join('\n\n')
    const streamed = mountEntry({ kind: 'assistant', id: 'grown', text: '' })
    for (let end = 5; end < text.length + 5; end += 5) {
      await streamed.setProps({ entry: { kind: 'assistant', id: 'grown', text: text.slice(0, end) } })
      await flushPromises()
    }
    const whole = mountEntry({ kind: 'assistant', id: 'whole', text })
    const html = (wrapper: typeof whole) => wrapper.find('.markdown').html()
    await vi.waitFor(() => expect(html(streamed)).toBe(html(whole)), { timeout: 30_000 })
    expect(streamed.findAll('.md-block')).toHaveLength(7)
    expect(streamed.find('table').exists()).toBe(true)
  })

  it('shows a long answer streamed faster than it is drawn whole and in order, as markdown and past its bounds as plain text', async () => {
    // Past LIMITS.growingChars a growing text is drawn again only every so often: what came meanwhile must not be lost.
    const entry = (text: string): ThreadEntry => ({ kind: 'assistant', id: 'long', text })
    const words = Array.from({ length: 16_000 }, (_, i) => `word ${i + 1} `).join('')
    const wrapper = mountEntry(entry(''))
    const stream = async (from: number, to: number) => {
      for (let end = from; end < to;) {
        end = Math.min(to, end + 2_000)
        await wrapper.setProps({ entry: entry(words.slice(0, end)) })
        await flushPromises()
      }
    }
    await stream(0, 60_000)
    await vi.waitFor(() => expect(wrapper.find('.md-block p').text()).toBe(words.slice(0, 60_000).trimEnd()), { timeout: 5_000 })
    await stream(60_000, words.length)
    await vi.waitFor(() => wrapper.find('[data-testid=plain-show-all]').trigger('click'), { timeout: 5_000 })
    const shown = () =>
      wrapper
        .findAll('.plain-piece')
        .map((piece) => piece.element.textContent)
        .join('')
    await vi.waitFor(() => expect(shown().length).toBe(words.length), { timeout: 10_000 })
    expect(shown()).toBe(words)
  })

  it('adds streamed words to the paragraph being written, which keeps its text (and a selection in it)', async () => {
    const entry = (text: string): ThreadEntry => ({ kind: 'assistant', id: 'words', text })
    const wrapper = mountEntry(entry('First paragraph.\n\nThe second one'))
    const paragraph = () => wrapper.findAll('.md-block p')[1].element
    const text = paragraph().firstChild
    const selection = document.getSelection()!
    selection.setBaseAndExtent(text!, 4, text!, 10)
    // A render may wait for the last one's cost (MarkdownBlock): each is waited for.
    const grow = async (more: string) => {
      await wrapper.setProps({ entry: entry(`First paragraph.\n\nThe second one${more}`) })
      await vi.waitFor(() => expect(paragraph().textContent).toContain(more.replace(/\*\*/g, '')), { timeout: 5_000 })
    }
    await grow(' grows')
    await grow(' grows, word by word')
    expect(paragraph().firstChild).toBe(text)
    expect(paragraph().textContent).toBe('The second one grows, word by word')
    expect(selection.toString()).toBe('second')
    // Markup added is rendered as markup, never appended as text.
    await grow(' grows, word by word, **bold** & <b>raw</b>')
    expect(paragraph().querySelector('strong')?.textContent).toBe('bold')
    expect(paragraph().textContent).toBe('The second one grows, word by word, bold & <b>raw</b>')
    expect(paragraph().querySelector('b')).toBeNull()
  })

  it('copies from the keyboard too', async () => {
    const wrapper = mountEntry({ kind: 'assistant', id: 'a2', text: '```\nls -la\n```' })
    await wrapper.find('.code-copy').trigger('keydown', { key: 'Enter' })
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith('ls -la\n')
  })

  it('shows a person’s message as markdown with its line breaks, and a mentioned file that can be shown', async () => {
    const wrapper = mountEntry({ kind: 'user', id: 'u1', text: 'first line\nsecond *line*\n[app.ts](file:///work/app/src/app.ts)' })
    expect(wrapper.find('br').exists()).toBe(true)
    expect(wrapper.find('em').text()).toBe('line')
    await wrapper.find('.file-link').trigger('click')
    await flushPromises()
    expect(opened).toEqual([{ path: '/work/app/src/app.ts', line: undefined }])
  })

  it('keeps a thought closed, with a one-line preview, until it is opened', async () => {
    const wrapper = mountEntry({ kind: 'thought', id: 't1', text: 'Weighing **two** options:\n\n1. rewrite\n2. patch' })
    const details = wrapper.find('details').element as HTMLDetailsElement
    expect(details.open).toBe(false)
    expect(wrapper.find('.thought-preview').text()).toBe('Weighing two options: 1. rewrite 2. patch')
    expect(wrapper.find('.markdown').exists()).toBe(false)
    details.open = true
    await wrapper.find('details').trigger('toggle')
    expect(wrapper.find('.markdown ol').exists()).toBe(true)
    expect(wrapper.find('.thought-preview').exists()).toBe(false)
    // Scrolled out of the (virtualised) list and back: still open.
    wrapper.unmount()
    const again = mountEntry({ kind: 'thought', id: 't1', text: 'Weighing **two** options:\n\n1. rewrite\n2. patch' })
    expect((again.find('details').element as HTMLDetailsElement).open).toBe(true)
    expect(again.find('.markdown ol').exists()).toBe(true)
  })
})

describe('plan', () => {
  it('is a checklist of the agent’s steps with their progress', () => {
    const wrapper = mountEntry({
      kind: 'plan',
      id: 'p1',
      entries: [
        { content: 'Read the code', priority: 'high', status: 'completed' },
        { content: 'Change it', priority: 'medium', status: 'in_progress' },
        { content: 'Run the tests', priority: 'low', status: 'pending' }
      ]
    })
    expect(wrapper.find('[data-testid=plan-progress]').text()).toBe('· 1 of 3 done')
    const steps = wrapper.findAll('li')
    expect(steps.map((s) => s.classes()[0])).toEqual(['completed', 'in_progress', 'pending'])
    expect(steps[0].find('.check').text()).toBe('✓')
    expect(steps.map((s) => s.find('.step').text())).toEqual(['Read the code', 'Change it', 'Run the tests'])
  })
})

describe('tool calls', () => {
  const edit: ToolCallEntry = {
    kind: 'tool_call',
    id: 'tool_call:t1',
    toolCallId: 't1',
    title: 'Edit src/app.ts',
    toolKind: 'edit',
    status: 'completed',
    locations: [{ path: '/work/app/src/app.ts', line: 3 }],
    content: [{ type: 'diff', path: '/work/app/src/app.ts', oldText: 'a\nconst b = 1\nc\nd\n', newText: 'a\nconst b = 2\nc\nd\ne\n' }],
    rawInput: { path: '/work/app/src/app.ts', edits: 2 },
    rawOutput: { applied: true }
  }

  it('shows a file the agent read as code: monospace, every line and indent kept, highlighted by its type; prose stays markdown', async () => {
    const file = 'import { a } from "./a"\n\n# not a heading\nfunction f() {\n    return `x`  // ``` inside\n}\n'
    const read: ToolCallEntry = {
      kind: 'tool_call',
      id: 'tool_call:r1',
      toolCallId: 'r1',
      title: 'Read src/app.ts',
      toolKind: 'read',
      status: 'completed',
      locations: [{ path: '/work/app/src/app.ts' }],
      content: [{ type: 'content', content: { type: 'text', text: file } }]
    }
    const wrapper = mountEntry(read)
    const text = wrapper.find('[data-testid=tool-call-text]')
    expect(text.attributes('data-code')).toBe('true')
    expect(text.find('h1').exists()).toBe(false)
    expect(text.find('.code-lang').text()).toBe('ts')
    expect(text.find('pre code').element.textContent).toBe(file)
    await vi.waitFor(() => expect(text.find('.hljs-keyword').text()).toBe('import'), { timeout: 30_000 })
    expect(text.find('pre code').element.textContent).toBe(file)

    // Line-numbered file text from any tool is code too; a tool's prose is markdown.
    const numbered = mountEntry({
      ...read,
      id: 'tool_call:o1',
      toolCallId: 'o1',
      toolKind: 'other',
      locations: [],
      content: [{ type: 'content', content: { type: 'text', text: '     1→first line\n     2→  second\n     3→third' } }]
    })
    expect(numbered.find('[data-testid=tool-call-text] pre code').element.textContent).toBe('     1→first line\n     2→  second\n     3→third\n')
    const prose = mountEntry({
      ...read,
      id: 'tool_call:o2',
      toolCallId: 'o2',
      toolKind: 'fetch',
      content: [{ type: 'content', content: { type: 'text', text: 'The page says **hello**.' } }]
    })
    expect(prose.find('[data-testid=tool-call-text]').attributes('data-code')).toBe('false')
    expect(prose.find('[data-testid=tool-call-text] strong').text()).toBe('hello')
  })

  it('shows kind, title, status and places; a place is shown when clicked', async () => {
    const wrapper = mountEntry(edit)
    expect(wrapper.find('.kind').text()).toBe('Edit')
    expect(wrapper.find('.kind svg').exists()).toBe(true)
    expect(wrapper.find('.title').text()).toBe('Edit src/app.ts')
    expect(wrapper.find('[data-testid=tool-call-status]').text()).toBe('Done')
    const location = wrapper.find('[data-testid=tool-call-location]')
    expect(location.text()).toBe('src/app.ts:3')
    await location.trigger('click')
    await flushPromises()
    expect(opened).toEqual([{ path: '/work/app/src/app.ts', line: 3 }])
    expect(wrapper.find('.locations .feedback').text()).toBe('Path copied')
  })

  it('shows a change as a unified diff or side by side', async () => {
    const wrapper = mountEntry(edit)
    // The diff view is fetched when first shown (lazy.ts).
    await vi.waitFor(() => expect(wrapper.find('[data-testid=diff-stats]').text()).toBe('+2 −1'), { timeout: 30_000 })
    const lines = wrapper.findAll('[data-testid=diff-line]')
    expect(lines.map((l) => `${l.classes()[1]}:${l.find('.text').text()}`)).toEqual([
      'context:a',
      'del:const b = 1',
      'add:const b = 2',
      'context:c',
      'context:d',
      'add:e'
    ])
    expect(wrapper.find('.line.del .word').text()).toBe('1')
    expect(wrapper.find('.line.add .word').text()).toBe('2')
    // A table of cells to a screen reader; an added or removed line told by its sign and in words, not by colour alone.
    expect(lines.map((l) => l.findAll('[role=cell]').length)).toEqual([4, 4, 4, 4, 4, 4])
    expect(lines.map((l) => l.find('.sign').text())).toEqual(['', '−removed', '+added', '', '', '+added'])
    expect(wrapper.find('.line.del .sign [aria-hidden=true]').text()).toBe('−')
    expect(wrapper.find('.line.del .sign .visually-hidden').text()).toBe('removed')

    await wrapper.find('[data-testid=diff-split]').trigger('click')
    expect(wrapper.findAll('[data-testid=diff-line]')).toHaveLength(0)
    const rows = wrapper.findAll('[data-testid=diff-row]')
    expect(
      rows.map((r) =>
        r
          .findAll('.text')
          .map((t) => t.text())
          .join('|')
      )
    ).toEqual(['a|a', 'const b = 1|const b = 2', 'c|c', 'd|d', '|e'])
    expect(rows[4].find('.text.empty').exists()).toBe(true)
    expect(rows.map((r) => r.findAll('[role=cell]').length)).toEqual([6, 6, 6, 6, 6])
    expect(rows[1].findAll('.sign').map((t) => t.text())).toEqual(['−removed', '+added'])
    expect(rows[4].findAll('.sign').map((t) => t.text())).toEqual(['', '+added'])
    expect(wrapper.find('[data-testid=diff-split]').attributes('aria-pressed')).toBe('true')
  })

  it('shows raw input and output only when asked', async () => {
    const wrapper = mountEntry(edit)
    expect(wrapper.find('[data-testid=raw-body]').exists()).toBe(false)
    await wrapper.find('[data-testid=raw-input]').trigger('click')
    expect(JSON.parse(wrapper.find('[data-testid=raw-body]').text())).toEqual({ path: '/work/app/src/app.ts', edits: 2 })
    await wrapper.find('[data-testid=raw-output]').trigger('click')
    expect(JSON.parse(wrapper.find('[data-testid=raw-body]').text())).toEqual({ applied: true })
    await wrapper.find('[data-testid=raw-output]').trigger('click')
    expect(wrapper.find('[data-testid=raw-body]').exists()).toBe(false)
  })

  it('runs commands in a terminal view with the command, its exit and its output', () => {
    terminals = { term1: { command: 'npm test', output: '\u001b[32mPASS\u001b[0m all\n', exitStatus: { exitCode: 1 } } }
    const wrapper = mountEntry({
      ...edit,
      toolKind: 'execute',
      title: 'Run npm test',
      content: [{ type: 'terminal', terminalId: 'term1' }],
      rawInput: undefined,
      rawOutput: undefined
    })
    expect(wrapper.find('.command').text()).toBe('$ npm test')
    expect(wrapper.find('.terminal-exit').text()).toBe('exit 1')
    expect(wrapper.find('.terminal-exit').classes()).toContain('failed')
    expect(wrapper.find('.terminal-stub').text()).toBe('\u001b[32mPASS\u001b[0m all')
    expect(wrapper.find('[data-testid=terminal-text]').text()).toBe('PASS all')
    expect(wrapper.find('.raw').exists()).toBe(false)
  })

  it('says how a permission was answered, and what a remembered rule covers', () => {
    const entry = { kind: 'permission' as const, id: 'p1', title: 'npm test', allowed: true }
    const text = (fields: Partial<Extract<ThreadEntry, { kind: 'permission' }>>) =>
      mountEntry({ ...entry, answer: 'Allow', remembered: false, ...fields })
        .find('[data-testid=entry-permission]')
        .text()
    expect(text({})).toBe('Allowed: npm test — Allow')
    expect(text({ answer: 'Always allow', rule: 'running “npm test” with Bash (that exact command only)' })).toBe(
      'Allowed: npm test — Always allow, from now on for running “npm test” with Bash (that exact command only)'
    )
    expect(text({ remembered: true, rule: 'running “npm test” with Bash (that exact command only)' })).toBe(
      'Allowed: npm test — remembered answer (Allow) for running “npm test” with Bash (that exact command only)'
    )
    // A transcript from before rules said what they covered.
    expect(text({ remembered: true, answer: 'Always allow' })).toBe('Allowed: npm test — remembered answer (Always allow)')
  })

  it('says when it waits for the user’s answer to a permission request', () => {
    pending = 't1'
    const wrapper = mountEntry({ ...edit, status: 'pending' })
    expect(wrapper.find('[data-testid=tool-call-status]').text()).toBe('Needs your answer')
    expect(wrapper.find('.tool-call').classes()).toContain('awaiting')
  })
})

describe('permission card', () => {
  const permission = {
    requestId: 'r1',
    title: 'Run rm -rf build',
    options: [
      { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
      { optionId: 'once', name: 'Allow', kind: 'allow_once' },
      { optionId: 'no', name: 'Reject', kind: 'reject_once' }
    ]
  }
  /** A key pressed where the focus is (as the browser sends it). */
  const key = (k: string, target: EventTarget = document.activeElement ?? window) =>
    target.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }))

  it('numbers its options allow once first, focuses that one, and answers with a digit or Esc', async () => {
    const wrapper = mount(PermissionCard, { props: { permission }, attachTo: document.body })
    await flushPromises()
    // The agent sent "Always allow" first: "Allow" once comes first, and has the focus.
    expect(wrapper.findAll('[data-testid=permission-option]').map((b) => b.text())).toEqual(['1 Allow', '2 Always allow', '3 Reject'])
    expect(document.activeElement?.textContent).toBe('1 Allow')
    key('3')
    key('9')
    key('Escape')
    const answers = wrapper.emitted('answer')
    expect(answers).toEqual([['no'], [null]])
    // Gone from the page, it hears no more keys.
    wrapper.unmount()
    key('1')
    expect(answers).toHaveLength(2)
  })

  it('without "Allow once", focuses "Reject once", else itself: never an "always"', async () => {
    const reject = mount(PermissionCard, {
      props: { permission: { ...permission, options: permission.options.filter((o) => o.optionId !== 'once') } },
      attachTo: document.body
    })
    await flushPromises()
    expect(document.activeElement?.textContent).toBe('2 Reject')
    reject.unmount()
    const always = { ...permission, options: permission.options.filter((o) => o.optionId === 'always') }
    const card = mount(PermissionCard, { props: { permission: always }, attachTo: document.body })
    await flushPromises()
    expect(document.activeElement).toBe(card.find('[data-testid=permission]').element)
    // The card has the focus: its keys still answer.
    key('1')
    expect(card.emitted('answer')).toEqual([['always']])
    card.unmount()
  })

  it('takes no key from outside it, nor from a dialog over the window', async () => {
    const wrapper = mount(PermissionCard, { props: { permission }, attachTo: document.body })
    await flushPromises()
    key('1', document.body)
    key('Escape', window)
    const dialog = document.createElement('dialog')
    const button = document.createElement('button')
    dialog.appendChild(button)
    document.body.appendChild(dialog)
    key('1', button)
    key('Escape', button)
    expect(wrapper.emitted('answer')).toBeUndefined()
    dialog.remove()
    wrapper.unmount()
  })

  it('offers to show the tool call it is about, keeping the focus on the first option', async () => {
    const wrapper = mount(PermissionCard, { props: { permission: { ...permission, toolCallId: 't9' } }, attachTo: document.body })
    await flushPromises()
    expect(document.activeElement).toBe(wrapper.find('[data-testid=permission-option]').element)
    await wrapper.find('[data-testid=permission-show]').trigger('click')
    expect(wrapper.emitted('show')).toEqual([[]])
    expect(wrapper.emitted('answer')).toBeUndefined()
  })

  it('names an "always" for what Switchboard remembers, and says what it covers', async () => {
    const always = {
      remembered: true as const,
      tool: 'Bash',
      toolKind: 'execute',
      scope: { kind: 'command' as const, command: 'rm -rf build' },
      project: 'app',
      description: 'running “rm -rf build” with Bash (that exact command only)'
    }
    const claude = {
      ...permission,
      options: [{ optionId: 'allow_always', name: 'Always Allow Bash(rm:*)', kind: 'allow_always' }, ...permission.options.slice(1)],
      always
    }
    const wrapper = mount(PermissionCard, { props: { permission: claude } })
    const buttons = wrapper.findAll('[data-testid=permission-option]')
    expect(buttons.map((b) => b.text())).toEqual(['1 Allow', '2 Always allow', '3 Reject'])
    expect(buttons[1].attributes('title')).toBe(
      'The agent offered “Always Allow Bash(rm:*)”. Switchboard remembers only: running “rm -rf build” with Bash (that exact command only).'
    )
    expect(buttons[0].attributes('title')).toBeUndefined()
    expect(wrapper.find('[data-testid=permission-always]').text()).toMatch(
      /^“Always” remembers running rm -rf build with Bash \(that exact command only\), for this agent only\./
    )
    expect(wrapper.find('[data-testid=permission-always] code').text()).toBe('rm -rf build')

    await wrapper.setProps({ permission: { ...claude, always: { ...always, tool: 'Edit', toolKind: 'edit', scope: { kind: 'files' as const } } } })
    expect(wrapper.find('[data-testid=permission-always]').text()).toMatch(/^“Always” remembers Edit on any file inside app, for this agent only\./)
    wrapper.unmount()
  })

  it('names an MCP rule by its server and tool, and an agent\'s "for this session" for what it is', () => {
    const codex = {
      requestId: 'r2',
      title: 'Approve MCP tool call',
      options: [
        { optionId: 'approved', name: 'Allow', kind: 'allow_once' },
        { optionId: 'approved-for-session', name: 'Allow for this session', kind: 'allow_always', forSession: true as const },
        { optionId: 'approved-always', name: "Allow and don't ask again", kind: 'allow_always' },
        { optionId: 'cancel', name: 'Cancel', kind: 'reject_once' }
      ],
      always: {
        remembered: true as const,
        tool: 'search_docs',
        toolKind: 'other',
        scope: { kind: 'mcp' as const, server: 'docs' },
        project: 'app',
        description: 'the tool search_docs of the MCP server docs, and no other'
      }
    }
    const wrapper = mount(PermissionCard, { props: { permission: codex } })
    expect(wrapper.findAll('[data-testid=permission-option]').map((b) => b.text())).toEqual([
      '1 Allow',
      '2 Allow for this session',
      '3 Always allow',
      '4 Cancel'
    ])
    expect(wrapper.find('[data-testid=permission-always]').text()).toMatch(
      /^“Always” remembers the tool search_docs of the MCP server docs, and no other, for this agent only; “for this session” the same, in this session only, until Switchboard closes\./
    )
    wrapper.unmount()
  })

  it('says why there is no "always", and keeps the agent\'s names when nothing is remembered', async () => {
    const outside = {
      ...permission,
      options: permission.options.slice(1),
      always: { remembered: false as const, reason: "it names /etc/hosts, outside app's folders, so it is asked each time" }
    }
    const wrapper = mount(PermissionCard, { props: { permission: outside } })
    expect(wrapper.findAll('[data-testid=permission-option]').map((b) => b.text())).toEqual(['1 Allow', '2 Reject'])
    expect(wrapper.find('[data-testid=permission-always]').text()).toBe(
      "No “always” for this one: it names /etc/hosts, outside app's folders, so it is asked each time."
    )
    // No description at all (a mode switch): the agent's options as they are, nothing said.
    await wrapper.setProps({ permission })
    expect(wrapper.findAll('[data-testid=permission-option]').map((b) => b.text())).toEqual(['1 Allow', '2 Always allow', '3 Reject'])
    expect(wrapper.find('[data-testid=permission-always]').exists()).toBe(false)
    wrapper.unmount()
  })

  /**
   * A card that comes while the user writes in a field keeps out of it; one that comes over an empty field (a prompt
   * just sent) takes the focus for `control`, its first answer.
   */
  async function expectFocusUnlessWriting(card: () => VueWrapper, control: (wrapper: VueWrapper) => Element): Promise<void> {
    const field = document.createElement('textarea')
    document.body.appendChild(field)
    field.value = 'half a sentence'
    field.focus()
    const writing = card()
    await flushPromises()
    expect(document.activeElement).toBe(field)
    writing.unmount()
    field.value = ''
    field.focus()
    const empty = card()
    await flushPromises()
    expect(document.activeElement).toBe(control(empty))
    empty.unmount()
    field.remove()
  }

  it('leaves the focus in a field the user is writing in, and takes it from an empty one', async () => {
    await expectFocusUnlessWriting(
      () => mount(PermissionCard, { props: { permission }, attachTo: document.body }),
      (card) => card.find('[data-testid=permission-option]').element
    )
  })

  it('an agent’s question, too, leaves the focus in a field the user is writing in', async () => {
    const question = {
      requestId: 'q',
      agentId: 'a',
      sessionId: 's',
      mode: 'form' as const,
      message: 'Which name?',
      fields: [{ name: 'name', title: 'Name', type: 'string' as const, required: true }]
    }
    await expectFocusUnlessWriting(
      () => mount(ElicitationCard, { props: { agentName: 'Agent', question }, attachTo: document.body, global: { plugins: [createPinia()] } }),
      (card) => card.find('input').element
    )
  })

  it('leaves digits alone while the user types in a field', async () => {
    const field = document.createElement('textarea')
    document.body.appendChild(field)
    const wrapper = mount(PermissionCard, { props: { permission }, attachTo: document.body })
    key('1', field)
    expect(wrapper.emitted('answer')).toBeUndefined()
    await wrapper.find('[data-testid=permission-option]').trigger('click')
    expect(wrapper.emitted('answer')).toEqual([['once']])
  })
})
