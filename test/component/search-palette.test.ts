// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { SearchHit, SearchResults } from '../../shared/search'
import SearchPalette from '../../renderer/src/components/window/SearchPalette.vue'
import { useAgentsStore } from '../../renderer/src/stores/agents'
import { useProjectsStore } from '../../renderer/src/stores/projects'
import { useUiStore } from '../../renderer/src/stores/ui'
import { FakeHost } from './fake-host'

/** The search palette asks as the user types: at once, and never more than one question at a time. */

const hit = (title: string): SearchHit => ({
  kind: 'session',
  projectId: 'p1',
  sessionId: `s-${title}`,
  agentId: 'a1',
  title,
  snippet: { text: title, marks: [] },
  score: 1
})

let fake: FakeHost
/** The questions the Host was asked, each answered when the test says. */
let asked: { q: string; answer: (results: SearchResults) => void }[]

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  asked = []
  fake = new FakeHost({
    'search.query': ({ q }: { q: string }) => new Promise<SearchResults>((resolve) => asked.push({ q, answer: resolve }))
  }).install()
  useProjectsStore().setAll([{ id: 'p1', name: 'shop', cwd: '/work/shop', createdAt: '2026-01-01T00:00:00.000Z' }], [])
})

const results = (...titles: string[]): SearchResults => ({ projects: [], sessions: titles.map(hit), entries: [], indexing: null })
const message = (i: number): SearchHit => ({
  ...hit(`talk ${i}`),
  kind: 'entry',
  entryId: `e${i}`,
  entryKind: 'user',
  snippet: { text: `render ${i}`, marks: [[0, 6]] }
})
const messages = (n: number): SearchResults => ({
  projects: [],
  sessions: [],
  entries: Array.from({ length: n }, (_, i) => message(i)),
  indexing: null
})

describe('the search palette', () => {
  it('asks at each keystroke; what is typed while a question is out is asked once, as it is when the answer comes', async () => {
    useUiStore().searchOpen = true
    const palette = mount(SearchPalette, { attachTo: document.body })
    await flushPromises()
    const input = palette.get('[data-testid=search-input]')

    // The first keystroke is asked at once, with no pause for typing.
    await input.setValue('r')
    expect(asked.map((a) => a.q)).toEqual(['r'])
    // Typed while it is out: nothing more is asked yet.
    await input.setValue('re')
    await input.setValue('ren')
    expect(asked.map((a) => a.q)).toEqual(['r'])
    // Its answer comes: the text as it now is goes, once; the stale answer is not shown.
    asked[0].answer(results('for r'))
    await flushPromises()
    expect(asked.map((a) => a.q)).toEqual(['r', 'ren'])
    expect(palette.findAll('[data-testid=search-result]')).toHaveLength(0)
    asked[1].answer(results('render the list', 'rename a file'))
    await flushPromises()
    expect(palette.findAll('[data-testid=search-result]').map((r) => r.text())).toEqual([
      expect.stringContaining('render the list'),
      expect.stringContaining('rename a file')
    ])
    // Nothing out: the next keystroke is asked at once again.
    await input.setValue('rend')
    expect(asked.map((a) => a.q)).toEqual(['r', 'ren', 'rend'])
    expect(fake.requests.filter((r) => r.method === 'search.query')).toHaveLength(3)
    palette.unmount()
  })

  it('a long answer is all in the list a frame after its first screenful, and the keys reach every row of it', async () => {
    useUiStore().searchOpen = true
    const palette = mount(SearchPalette, { attachTo: document.body })
    await flushPromises()
    await palette.get('[data-testid=search-input]').setValue('render')
    const titles = Array.from({ length: 40 }, (_, i) => `render ${i}`)
    asked[0].answer(results(...titles))
    await flushPromises()
    const shown = () => palette.findAll('[data-testid=search-result]').map((r) => r.text())
    // The first rows at once; every row once that frame is painted.
    expect(shown().length).toBeGreaterThan(0)
    await expect.poll(() => shown().length).toBe(40)
    expect(shown()).toEqual(titles.map((t): unknown => expect.stringContaining(t)))
    // Up from the first row is the last, selected and named as the active one.
    await palette.get('[data-testid=search-input]').trigger('keydown', { key: 'ArrowUp' })
    const last = palette.findAll('[data-testid=search-result]').at(-1)
    expect(last?.attributes('aria-selected')).toBe('true')
    expect(palette.get('[data-testid=search-input]').attributes('aria-activedescendant')).toBe(last?.attributes('id'))
    palette.unmount()
  })

  it('asks for the messages of a screenful first, and for the rest once it is to be drawn or ↑ goes past the top', async () => {
    useUiStore().searchOpen = true
    const palette = mount(SearchPalette, { attachTo: document.body })
    await flushPromises()
    const limits = (): unknown[] => fake.calls('search.query').map((params) => (params as { limit: number }).limit)
    await palette.get('[data-testid=search-input]').setValue('render')
    expect(limits()).toEqual([12])
    asked[0].answer(messages(12))
    await flushPromises()
    const shown = () => palette.findAll('[data-testid=search-result]').map((r) => r.text())
    expect(shown()).toHaveLength(12)
    // happy-dom lays nothing out, so the first rows never fill the list: the rest is asked for once they are painted (a
    // list they fill asks once scrolled: e2e/search.test.ts). It is shown in place of the first, the selection where it was.
    await expect.poll(limits).toEqual([12, 40])
    asked[1].answer(messages(40))
    await flushPromises()
    expect(shown()).toEqual(Array.from({ length: 40 }, (_, i): unknown => expect.stringContaining(`render ${i}`)))
    expect(palette.get('[aria-selected=true]').text()).toContain('render 0')

    // Typed again: a screenful again; ↑ from the first row asks for the rest and selects the last row of it.
    await palette.get('[data-testid=search-input]').setValue('render the')
    asked[2].answer(messages(12))
    await flushPromises()
    await palette.get('[data-testid=search-input]').trigger('keydown', { key: 'ArrowUp' })
    expect(limits()).toEqual([12, 40, 12, 40])
    asked[3].answer(messages(40))
    await flushPromises()
    expect(palette.get('[aria-selected=true]').text()).toContain('render 39')
    // An answer of fewer messages than a screenful is the whole: nothing more is asked.
    await palette.get('[data-testid=search-input]').setValue('render them')
    asked[4].answer(messages(5))
    await flushPromises()
    await palette.get('#search-results').trigger('scroll')
    await palette.get('[data-testid=search-input]').trigger('keydown', { key: 'ArrowUp' })
    expect(limits()).toEqual([12, 40, 12, 40, 12])
    expect(palette.get('[aria-selected=true]').text()).toContain('render 4')
    palette.unmount()
  })

  it('the keys reach a row below the first screenful at once, before the rest is drawn', async () => {
    useUiStore().searchOpen = true
    const palette = mount(SearchPalette, { attachTo: document.body })
    await flushPromises()
    await palette.get('[data-testid=search-input]').setValue('render')
    asked[0].answer(results(...Array.from({ length: 40 }, (_, i) => `render ${i}`)))
    await flushPromises()
    await palette.get('[data-testid=search-input]').trigger('keydown', { key: 'ArrowUp' })
    const selected = palette.find('[aria-selected=true]')
    expect(selected.text()).toContain('render 39')
    palette.unmount()
  })

  it("draws each row with its agent's icon and who said it; the pointer selects a row, a click opens it", async () => {
    useAgentsStore().setAll(
      [
        { id: 'a1', name: 'Helper Bot', transport: { kind: 'process', command: 'helper', args: [], env: {} } },
        { id: 'a2', name: 'Far Agent', transport: { kind: 'network', url: 'wss://agents.example.com/acp' } }
      ],
      []
    )
    useUiStore().searchOpen = true
    const palette = mount(SearchPalette, { attachTo: document.body })
    await flushPromises()
    await palette.get('[data-testid=search-input]').setValue('render')
    const said = (i: number, agentId: string, entryKind: string): SearchHit => ({ ...message(i), agentId, entryKind })
    const project: SearchHit = { kind: 'project', projectId: 'p1', title: 'shop', snippet: { text: 'shop', marks: [] }, score: 1 }
    asked[0].answer({
      projects: [project],
      sessions: [],
      entries: [said(0, 'a1', 'assistant'), said(1, 'a2', 'assistant'), said(2, 'a1', 'user')],
      indexing: null
    })
    await flushPromises()
    const rows = palette.findAll('[data-testid=search-result]')
    expect(palette.findAll('.group').map((g) => g.text())).toEqual(['Projects', 'Messages'])
    expect(rows.map((r) => r.find('[data-testid=agent-icon]').exists())).toEqual([false, true, true, true])
    // The icon: the agent's monogram, named (and where it runs when elsewhere); the snippet says who said it, its match marked.
    const icon = rows[1].get('[data-testid=agent-icon]')
    expect([icon.text(), icon.attributes('aria-label')]).toEqual(['HB', 'Helper Bot'])
    expect(rows[1].get('.snippet').text()).toBe('Helper Bot:render 0')
    expect(rows[1].findAll('mark').map((m) => m.text())).toEqual(['render'])
    expect(rows[2].get('[data-testid=agent-icon]').attributes('aria-label')).toContain('Far Agent, over the network')
    expect(rows[2].find('[data-testid=agent-remote-mark]').exists()).toBe(true)
    expect(rows[3].get('.snippet').text()).toBe('You:render 2')
    // The pointer over a row (on its marked word) selects it; a click on a project's row closes the palette to show it.
    await rows[2].get('mark').trigger('mousemove')
    expect(palette.findAll('[data-testid=search-result]').map((r) => r.attributes('aria-selected'))).toEqual(['false', 'false', 'true', 'false'])
    await rows[0].get('.title').trigger('click')
    expect(useUiStore().searchOpen).toBe(false)
    palette.unmount()
  })
})
