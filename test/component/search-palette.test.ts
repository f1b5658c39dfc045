// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { SearchHit, SearchResults } from '../../shared/search'
import SearchPalette from '../../renderer/src/components/window/SearchPalette.vue'
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
})
