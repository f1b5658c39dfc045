// @vitest-environment happy-dom
import './happy-dom-fixes'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { computed } from 'vue'
import { flushPromises, mount } from '@vue/test-utils'
import type { ThreadEntry, ToolCallEntry } from '../../shared/thread'
import EntryView from '../../renderer/src/components/thread/EntryView.vue'
import PermissionCard from '../../renderer/src/components/session/PermissionCard.vue'
import AgentText from '../../renderer/src/components/common/AgentText.vue'
import ElicitationCard from '../../renderer/src/components/session/ElicitationCard.vue'
import SessionControls from '../../renderer/src/components/session/SessionControls.vue'
import RuleScope from '../../renderer/src/components/session/RuleScope.vue'
import { createPinia } from 'pinia'
import { createThread } from '../../shared/thread'
import { openPathKey, pendingToolCallKey, sessionRootKey, terminalsKey } from '../../renderer/src/components/thread/keys'
import { LIMITS, grownPieces, markdownVerdict, plainPieces, revealPath, type PlainCut } from '../../renderer/src/agent-text'
import { renderAgentMarkdown } from '../../renderer/src/markdown'
import { opened, said } from '../../renderer/src/view-state'
import { PATHOLOGICAL, pathologicalText } from '../agent/pathological'

/**
 * Agent text that would freeze the window, and agent text that reads unlike
 * what it is: each shown bounded (plain text past the limits, the rest one
 * click away) and with its invisible characters shown.
 */

const RLO = '\u202E'
const openedPaths: string[] = []

function mountEntry(entry: ThreadEntry) {
  return mount(EntryView, {
    props: { entry },
    attachTo: document.body,
    global: {
      provide: {
        [openPathKey as symbol]: async (path: string) => {
          openedPaths.push(path)
          return 'Path copied'
        },
        [terminalsKey as symbol]: computed(() => ({})),
        [sessionRootKey as symbol]: computed(() => '/work/app'),
        [pendingToolCallKey as symbol]: computed(() => null)
      }
    }
  })
}

const toolCall = (over: Partial<ToolCallEntry>): ToolCallEntry => ({
  kind: 'tool_call',
  id: 'tool_call:t1',
  toolCallId: 't1',
  title: 'Read a file',
  toolKind: 'read',
  status: 'completed',
  locations: [],
  content: [],
  ...over
})

const writeText = vi.fn(async (_text: string) => undefined)

/** Waits for the frames "Show all" takes to add its pieces. */
async function untilShown(check: () => boolean): Promise<void> {
  await vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet')
    },
    { timeout: 20_000, interval: 20 }
  )
}

beforeEach(() => {
  openedPaths.length = 0
  opened.clear()
  said.clear()
  writeText.mockClear()
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
})
afterEach(() => {
  vi.restoreAllMocks()
  document.body.innerHTML = ''
})

describe('markdown within bounds', () => {
  it.each(Object.entries(PATHOLOGICAL).map(([kind, payload]) => [kind, payload.describe(payload.size)]))(
    'does not render %s (%s) as markdown, and says why',
    (kind) => {
      const result = renderAgentMarkdown(pathologicalText(kind))
      expect(result.blocks).toBeUndefined()
      expect(result.plain).toMatch(/long|nested|“\[”|emphasis/)
    }
  )

  it('renders ordinary long answers as markdown: a big code block, a long list, bold words, links', () => {
    const code = '```python\n' + Array.from({ length: 300 }, (_, i) => `def f_${i}(*args, **kw): return a_b * c_d  # __x__`).join('\n') + '\n```'
    const list = Array.from({ length: 200 }, (_, i) => `* item **${i}** with a [link](https://example.com/${i}) and \`code\``).join('\n')
    const prose = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} has *some* **bold** and _italic_ words.`).join('\n\n')
    for (const text of [code, list, prose]) {
      expect(markdownVerdict(text)).toBeNull()
      expect(renderAgentMarkdown(text).blocks?.length).toBeGreaterThan(0)
    }
  })

  it('shows nesting it can keep whole as markdown, and deeper nesting as plain text rather than dropping its inside', () => {
    const shallow = renderAgentMarkdown('> '.repeat(10) + 'the innermost quote')
    expect(shallow.blocks?.join('')).toContain('the innermost quote')
    const deep = renderAgentMarkdown('> '.repeat(25) + 'the innermost quote')
    expect(deep.plain).toMatch(/nested more than \d+ levels deep/)
    const list = renderAgentMarkdown(Array.from({ length: 15 }, (_, i) => `${'  '.repeat(i)}- level ${i + 1}`).join('\n'))
    expect(list.plain).toMatch(/nested/)
  })

  it('cuts plain text in pieces at line breaks, only as far as asked, without losing a character', () => {
    const text = pathologicalText('list', 100)
    const pieces = plainPieces(text, Infinity, 1000)
    expect(pieces.join('')).toBe(text)
    expect(pieces.slice(0, -1).every((p) => p.endsWith('\n') && p.length <= 1000)).toBe(true)
    expect(plainPieces(text, 2, 1000)).toEqual(pieces.slice(0, 2))
    const line = pathologicalText('word', 5000)
    expect(plainPieces(line, Infinity, 1000).map((p) => p.length)).toEqual([1000, 1000, 1000, 1000, 1000])
  })

  it('cuts a growing text as it grows: each step the same pieces as cutting it whole, nothing dropped or doubled', () => {
    // A reply streaming in: chunks of any size, line breaks here and there, a long line, characters outside the BMP at piece ends.
    let seed = 7
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n
    const alphabet = ['word ', 'a', '\n', '😀', 'x'.repeat(700), 'é', '\n\n']
    let text = ''
    let before: PlainCut | null = null
    let limited: PlainCut | null = null
    for (let step = 0; step < 400; step++) {
      let chunk = ''
      for (let i = random(12); i >= 0; i--) chunk += alphabet[random(alphabet.length)]
      text += chunk
      const cut = grownPieces(before, text, Infinity, 1000)
      expect(cut.pieces).toEqual(plainPieces(text, Infinity, 1000))
      expect(cut.pieces.join('')).toBe(text)
      // A piece kept from the last cut keeps its index and length in the same generation (what the page memoises it by).
      if (before) {
        expect(cut.generation).toBe(before.generation)
        before.pieces.slice(0, -1).forEach((p, i) => expect(cut.pieces[i]).toBe(p))
      }
      before = cut
      // Shown a few pieces more every few steps, as "Show all" does frame by frame.
      const max = 2 + Math.floor(step / 10)
      const some = grownPieces(limited, text, max, 1000)
      expect(some.pieces).toEqual(plainPieces(text, max, 1000))
      limited = some
    }
    expect(before?.pieces.length).toBeGreaterThan(20)
    // A text that is not the last one grown (replaced, or cut shorter) is cut anew.
    const other = 'y'.repeat(2500)
    const replaced = grownPieces(before, other, Infinity, 1000)
    expect(replaced.pieces).toEqual(plainPieces(other, Infinity, 1000))
    expect(replaced.generation).not.toBe(before?.generation)
    const shorter = grownPieces(before, text.slice(0, 5000), Infinity, 1000)
    expect(shorter.pieces).toEqual(plainPieces(text.slice(0, 5000), Infinity, 1000))
    expect(shorter.generation).not.toBe(before?.generation)
  })
})

describe('a message too big for markdown', () => {
  const text = pathologicalText('line')

  it('shows the start as plain text, says how much there is, and shows all of it in pieces on request', async () => {
    const wrapper = mountEntry({ kind: 'assistant', id: 'big', text })
    expect(wrapper.find('.md-block').exists()).toBe(false)
    expect(wrapper.find('[data-testid=plain-note]').text()).toContain('Shown as plain text: it is 5.0 MB long')
    const pieces = () => wrapper.findAll('.plain-piece')
    expect(pieces()).toHaveLength(LIMITS.plainPiecesShown)
    expect(
      pieces()
        .map((p) => p.element.textContent)
        .join('')
    ).toBe(text.slice(0, LIMITS.plainPiece * LIMITS.plainPiecesShown))
    // No "as markdown" for 5 MB: that is what froze the window.
    expect(wrapper.find('[data-testid=plain-as-markdown]').exists()).toBe(false)

    await wrapper.find('[data-testid=plain-copy]').trigger('click')
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith(text)

    await wrapper.find('[data-testid=plain-show-all]').trigger('click')
    await untilShown(() => pieces().length === Math.ceil(text.length / LIMITS.plainPiece))
    expect(
      pieces()
        .map((p) => p.element.textContent)
        .join('')
    ).toBe(text)
    expect(wrapper.find('[data-testid=plain-show-all]').exists()).toBe(false)
  })

  it('shows all of a reply that grows past the limit while shown whole, every character once, in order', async () => {
    const lines = Array.from({ length: 12_000 }, (_, i) => `line ${i} of the reply${i % 7 === 0 ? ' 😀' : ''}\n`)
    let text = lines.slice(0, 6_000).join('')
    const wrapper = mountEntry({ kind: 'assistant', id: 'growing', text })
    await wrapper.find('[data-testid=plain-show-all]').trigger('click')
    for (let at = 6_000; at < lines.length; at += 1_500) {
      text += lines.slice(at, at + 1_500).join('')
      await wrapper.setProps({ entry: { kind: 'assistant', id: 'growing', text } })
      await new Promise((r) => requestAnimationFrame(r))
    }
    const shown = () =>
      wrapper
        .findAll('.plain-piece')
        .map((p) => p.element.textContent)
        .join('')
    await untilShown(() => shown().length >= text.length)
    expect(shown()).toBe(text)
  })

  it('keeps "show all" when the list unmounts the entry and brings it back', async () => {
    const first = mountEntry({ kind: 'assistant', id: 'kept', text: pathologicalText('line', 200_000) })
    await first.find('[data-testid=plain-show-all]').trigger('click')
    first.unmount()
    const again = mountEntry({ kind: 'assistant', id: 'kept', text: pathologicalText('line', 200_000) })
    await untilShown(() => again.findAll('.plain-piece').length === Math.ceil(200_000 / LIMITS.plainPiece))
  })

  it('says "Copied" on the entry even when the list draws it again while the copy is under way', async () => {
    let release = (): void => undefined
    writeText.mockImplementationOnce(() => new Promise<undefined>((resolve) => (release = () => resolve(undefined))))
    const entry: ThreadEntry = { kind: 'assistant', id: 'copied', text: pathologicalText('brackets') }
    const first = mountEntry(entry)
    await first.find('[data-testid=plain-copy]').trigger('click')
    first.unmount()
    const again = mountEntry(entry)
    release()
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith(pathologicalText('brackets'))
    expect(again.find('[data-testid=plain-copy]').text()).toBe('Copied')
  })

  it('answers Copy even when the Clipboard API never does: the copy command is tried instead', async () => {
    writeText.mockImplementationOnce(() => new Promise<undefined>(() => undefined))
    const execCommand = vi.fn(() => true)
    Object.defineProperty(document, 'execCommand', { value: execCommand, configurable: true })
    const entry: ThreadEntry = { kind: 'assistant', id: 'unanswered', text: pathologicalText('brackets') }
    const view = mountEntry(entry)
    await view.find('[data-testid=plain-copy]').trigger('click')
    await vi.waitFor(() => expect(view.find('[data-testid=plain-copy]').text()).toBe('Copied'), { timeout: 10_000, interval: 50 })
    expect(execCommand).toHaveBeenCalledWith('copy')
  })

  it('offers markdown anyway for text within reach, and the raw text back', async () => {
    const wrapper = mountEntry({ kind: 'assistant', id: 'brackets', text: 'Intro **bold**\n\n' + '['.repeat(2_000) })
    expect(wrapper.find('[data-testid=plain-note]').text()).toContain('more than 1,000 “[”')
    expect(wrapper.find('.plain-piece').text()).toContain('Intro **bold**')
    await wrapper.find('[data-testid=plain-as-markdown]').trigger('click')
    expect(wrapper.find('strong').text()).toBe('bold')
    expect(wrapper.find('[data-testid=markdown-anyway]').exists()).toBe(true)
    await wrapper.find('[data-testid=markdown-as-plain]').trigger('click')
    expect(wrapper.find('strong').exists()).toBe(false)
    expect(wrapper.find('.plain-piece').text()).toContain('Intro **bold**')
  })

  it('switches a long text whose markdown render was slow to plain text, and keeps it there while it grows', async () => {
    const text = 'Some plain words here. '.repeat(1_000)
    let clock = 0
    vi.spyOn(performance, 'now').mockImplementation(() => (clock += 600))
    const wrapper = mountEntry({ kind: 'assistant', id: 'slow', text })
    expect(wrapper.find('[data-testid=plain-note]').text()).toMatch(/rendering it as markdown took \d+\.\d s/)
    await wrapper.setProps({ entry: { kind: 'assistant', id: 'slow', text: text + 'more' } })
    await new Promise((r) => setTimeout(r, 300))
    expect(wrapper.find('.md-block').exists()).toBe(false)
    await wrapper.find('[data-testid=plain-show-all]').trigger('click')
    await untilShown(() => /more$/.test(wrapper.find('[data-testid=plain-text]').text()))
  })

  it.each([
    ['a thought', (text: string): ThreadEntry => ({ kind: 'thought', id: 'th', text })],
    [
      'tool call content and title',
      (text: string): ThreadEntry => toolCall({ title: text, content: [{ type: 'content', content: { type: 'text', text } }] })
    ],
    [
      'a plan entry',
      (text: string): ThreadEntry => ({ kind: 'plan', id: 'p', entries: [{ content: text, priority: 'high', status: 'in_progress' }] })
    ]
  ])('keeps %s of 5 MB to a bounded page, with the whole text one click away', async (_name, entryOf) => {
    const wrapper = mountEntry(entryOf(text))
    const thought = wrapper.find('details')
    if (thought.exists()) {
      ;(thought.element as HTMLDetailsElement).open = true
      await thought.trigger('toggle')
    }
    expect(wrapper.element.textContent?.length ?? 0).toBeLessThan(100_000)
    const more = wrapper.find('[data-testid=plain-show-all], [data-testid=agent-text-more]')
    expect(more.text()).toContain('5.0 MB')
    await more.trigger('click')
    await untilShown(() => (wrapper.element.textContent?.length ?? 0) >= text.length)
  })

  it('keeps a permission request of megabytes inside its card, answerable', async () => {
    const wrapper = mount(PermissionCard, {
      props: { permission: { requestId: 'r', title: text, options: [{ optionId: 'allow', name: text.slice(0, 1_000_000), kind: 'allow_once' }] } },
      attachTo: document.body
    })
    expect(wrapper.element.textContent?.length ?? 0).toBeLessThan(10_000)
    await wrapper.find('[data-testid=permission-option]').trigger('click')
    expect(wrapper.emitted('answer')).toEqual([['allow']])
    await wrapper.find('[data-testid=agent-text-more]').trigger('click')
    expect(wrapper.find('[data-testid=plain-text]').exists()).toBe(true)
  })
})

describe('invisible characters and direction', () => {
  it('shows a right-to-left override in a message as a mark, so “txt.exe” does not read “exe.txt”', () => {
    const wrapper = mountEntry({ kind: 'assistant', id: 'm', text: `Open invoice${RLO}txt.exe now` })
    const mark = wrapper.find('.hidden-char')
    expect(mark.text()).toBe('RLO')
    expect(mark.attributes('title')).toContain('U+202E RIGHT-TO-LEFT OVERRIDE')
    expect(wrapper.text()).not.toContain(RLO)
    expect(wrapper.text()).toBe('Open invoiceRLOtxt.exe now')
  })

  it('leaves isolates and marks that right-to-left writing needs working in prose, and shows every control in code', async () => {
    const prose = mountEntry({ kind: 'assistant', id: 'p', text: 'שלום \u2067עולם\u2069 \u200F!' })
    expect(prose.find('.hidden-char').exists()).toBe(false)
    const code = mountEntry({ kind: 'assistant', id: 'c', text: '`if (a \u2067// x\u2069)`\n\n```js\nconst ok = "\u202E\u200B"\n```' })
    expect(
      code
        .findAll('code')[0]
        .findAll('.hidden-char')
        .map((m) => m.text())
    ).toEqual(['RLI', 'PDI'])
    expect(
      code
        .find('pre code')
        .findAll('.hidden-char')
        .map((m) => m.text())
    ).toEqual(['RLO', 'ZWSP'])
    // Copy gives the code as it is, invisible characters and all.
    await code.find('.code-copy').trigger('click')
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith('const ok = "\u202E\u200B"\n')
  })

  it('isolates a plan step and shows its override', () => {
    const wrapper = mountEntry({ kind: 'plan', id: 'p', entries: [{ content: `Rename ${RLO}txt.exe`, priority: 'high', status: 'pending' }] })
    const step = wrapper.find('.step')
    expect(step.element.tagName).toBe('BDI')
    expect(step.find('.hidden-char').text()).toBe('RLO')
    expect(step.attributes('title')).toContain('U+202E RIGHT-TO-LEFT OVERRIDE')
  })

  it('shows what hides in a mentioned file’s name, keeps the real path for opening, and warns', async () => {
    const wrapper = mountEntry({ kind: 'assistant', id: 'f', text: `See [report${RLO}fdp.exe](file:///tmp/report%E2%80%AEfdp.exe)` })
    const chip = wrapper.find('.file-link')
    expect(chip.text()).toBe('reportRLOfdp.exe')
    expect(chip.classes()).toContain('hidden-chars')
    expect(chip.attributes('title')).toBe(
      '/tmp/report⟨RLO⟩fdp.exe — Contains invisible characters that can change how it reads, shown as ⟨…⟩: U+202E RIGHT-TO-LEFT OVERRIDE'
    )
    await chip.trigger('click')
    await flushPromises()
    expect(openedPaths).toEqual([`/tmp/report${RLO}fdp.exe`])
  })

  it('keeps the host of a file URL on another machine', () => {
    const wrapper = mountEntry({ kind: 'assistant', id: 'h', text: '[x](file://fileserver/share/x.txt) and [y](file://localhost/tmp/y)' })
    const chips = wrapper.findAll('.file-link')
    expect(chips.map((c) => c.attributes('data-path'))).toEqual(['//fileserver/share/x.txt', '/tmp/y'])
    expect(chips[0].attributes('title')).toBe('//fileserver/share/x.txt')
  })

  it('shows every invisible character in a tool call’s paths, with a warning', () => {
    const wrapper = mountEntry(
      toolCall({ title: `Read ${RLO}gpj.exe`, locations: [{ path: '/work/app/src/a\u200Bpp.ts' }, { path: `/work/app/${RLO}fdp.exe` }] })
    )
    const locations = wrapper.findAll('[data-testid=tool-call-location]')
    expect(locations.map((l) => l.text())).toEqual(['src/aZWSPpp.ts', 'RLOfdp.exe'])
    expect(locations[0].attributes('title')).toBe('/work/app/src/a⟨ZWSP⟩pp.ts — show it')
    expect(locations[1].find('bdi').attributes('title')).toContain('U+202E RIGHT-TO-LEFT OVERRIDE')
    expect(wrapper.find('.title bdi .hidden-char').text()).toBe('RLO')
  })

  it('shows the override in a permission request’s title and option names, each isolated', () => {
    const wrapper = mount(PermissionCard, {
      props: {
        permission: { requestId: 'r', title: `Delete ${RLO}txt.exe`, options: [{ optionId: 'a', name: `Allow ${RLO}cod.exe`, kind: 'allow_once' }] }
      },
      attachTo: document.body
    })
    expect(wrapper.findAll('bdi').map((b) => b.text())).toEqual(['Delete RLOtxt.exe', 'Allow RLOcod.exe'])
  })

  it('does not make links of URLs inside HTML the agent wrote (shown as text), and keeps the links it wrote in markdown', () => {
    for (const text of [
      '<b>http://x.com</b>',
      '&lt;a href="http://evil.com"&gt;click&lt;/a&gt;',
      '<a href="https://evil.com/x">docs</a>',
      '<a href=https://evil.com>x</a>',
      '<img src="http://x.y/z.png">'
    ]) {
      const wrapper = mountEntry({ kind: 'assistant', id: 'x', text })
      expect({ text, links: wrapper.findAll('a').map((a) => a.attributes('href')) }).toEqual({ text, links: [] })
      expect(wrapper.text()).toContain('<')
    }
    const fine = mountEntry({
      kind: 'assistant',
      id: 'ok',
      text: 'See <https://ok.com>, https://fine.com and [docs](https://docs.com) (<b>bold</b>)'
    })
    expect(fine.findAll('a').map((a) => a.attributes('href'))).toEqual(['https://ok.com', 'https://fine.com', 'https://docs.com'])
  })

  it('cuts a long agent string and names what it left out; reveals paths fully', () => {
    const wrapper = mount(AgentText, { props: { text: 'x'.repeat(5_000), max: 100 } })
    expect(wrapper.text()).toBe('x'.repeat(100) + '…')
    expect(wrapper.attributes('title')).toMatch(/… \(3 KB more\)$/)
    expect(revealPath('a\u200Db\uFEFFc\u{E0041}')).toBe('a⟨ZWJ⟩b⟨BOM⟩c⟨U+E0041⟩')
  })

  it('shows the override in a terminal command and a diff’s path, each isolated', async () => {
    const wrapper = mount(EntryView, {
      props: {
        entry: toolCall({
          toolKind: 'execute',
          content: [
            { type: 'terminal', terminalId: 'term' },
            { type: 'diff', path: `/work/app/${RLO}fdp.exe`, oldText: 'a\n', newText: 'b\n' }
          ]
        })
      },
      global: {
        plugins: [createPinia()],
        provide: {
          [terminalsKey as symbol]: computed(() => ({ term: { id: 'term', command: `rm ${RLO}txt.exe`, output: '', exitStatus: null } })),
          [sessionRootKey as symbol]: computed(() => '/work/app'),
          [pendingToolCallKey as symbol]: computed(() => null)
        }
      }
    })
    expect(wrapper.find('.command bdi').text()).toBe('rm RLOtxt.exe')
    // The diff view is fetched when first shown (lazy.ts).
    await vi.waitFor(() => expect(wrapper.find('[data-testid=diff-path] bdi').text()).toBe('RLOfdp.exe'), { timeout: 30_000 })
  })

  it('shows overrides in an agent’s question, its fields and choices, and in its session settings', () => {
    const question = mount(ElicitationCard, {
      props: {
        agentName: 'Agent',
        question: {
          requestId: 'q',
          agentId: 'a',
          sessionId: 's',
          mode: 'form',
          message: `Rename ${RLO}txt.exe?`,
          title: `Form ${RLO}fdp.exe`,
          fields: [{ name: 'f', title: `Name ${RLO}gpj.exe`, type: 'select', required: true, options: [{ value: 'x', label: `Pick ${RLO}cod.exe` }] }]
        }
      },
      global: { plugins: [createPinia()] }
    })
    expect(question.findAll('bdi').map((b) => b.text())).toEqual(['Rename RLOtxt.exe?', 'Form RLOfdp.exe', 'Name RLOgpj.exe'])
    // A choice in a list box can hold no mark: its override is written out.
    expect(question.findAll('option').map((o) => o.text())).toContain('Pick ⟨RLO⟩cod.exe')
    // The page an agent asks the user to open: its address isolated, every hidden character in it shown.
    const page = mount(ElicitationCard, {
      props: {
        agentName: 'Agent',
        question: {
          requestId: 'u',
          agentId: 'a',
          sessionId: 's',
          mode: 'url',
          message: 'Sign in',
          url: `https://example.com/${RLO}fdp.exe`,
          fields: []
        }
      },
      global: { plugins: [createPinia()] }
    })
    expect(page.find('[data-testid="elicitation-url"] bdi').text()).toBe('https://example.com/RLOfdp.exe')
    expect(page.find('[data-testid="elicitation-url"] bdi').classes()).toContain('has-hidden')

    const thread = createThread()
    thread.configOptions = [
      {
        id: 'model',
        name: `Model ${RLO}lmth.exe`,
        type: 'select',
        currentValue: 'm',
        options: [{ value: 'm', name: `Fast ${RLO}3pm.exe` }]
      }
    ] as typeof thread.configOptions
    const controls = mount(SessionControls, { props: { sessionId: 's', thread, disabled: false }, global: { plugins: [createPinia()] } })
    expect(controls.find('label bdi').text()).toBe('Model RLOlmth.exe')
    expect(controls.find('option').text()).toBe('Fast ⟨RLO⟩3pm.exe')
  })

  it('isolates and cuts the tool name and command of a remembered permission, showing a command’s hidden characters', () => {
    const wrapper = mount(RuleScope, {
      props: { subject: { tool: 'T'.repeat(500), toolKind: 'execute', scope: { kind: 'command', command: `rm -rf a\u200Bb` } }, project: 'app' }
    })
    const [command, tool] = wrapper.findAll('bdi')
    expect(tool.text()).toBe('T'.repeat(80) + '…')
    expect(command.text()).toBe('rm -rf aZWSPb')
  })
})
