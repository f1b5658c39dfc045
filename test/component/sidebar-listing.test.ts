// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nextTick } from 'vue'
import type { HostEvent } from '../../shared/contract'
import type { Project, SessionRecord } from '../../shared/domain'
import { FIRST_PAGE, FIRST_RECORDS, NEXT_PAGE } from '../../shared/session-listing'
import { SessionListing } from '../../electron/host/storage/session-listing'
import ProjectList from '../../renderer/src/components/sidebar/ProjectList.vue'
import { listenToHost } from '../../renderer/src/event-router'
import { useAgentsStore } from '../../renderer/src/stores/agents'
import { useAppStore } from '../../renderer/src/stores/app'
import { usePanesStore } from '../../renderer/src/stores/panes'
import { useProjectsStore } from '../../renderer/src/stores/projects'
import { useSessionsStore } from '../../renderer/src/stores/sessions'
import { FakeHost, firstLoad } from './fake-host'

/**
 * The sidebar when the window holds only pages of the session list: the
 * projects store against a Host that answers from the Host's own index
 * (SessionListing) and sends what the Host sends when sessions come, change
 * and go; and the virtual list (ProjectList.vue): a page of rows in the DOM
 * however many sessions there are, "Show N more", the keyboard across rows.
 */

const base = Date.parse('2026-03-01T00:00:00Z')
const project = (id: string): Project => ({ id, name: id, cwd: `/work/${id}`, createdAt: new Date(base).toISOString() })

function session(projectId: string, agentId: string, i: number, minutes = i): SessionRecord {
  const at = new Date(base + minutes * 60_000).toISOString()
  return {
    id: `${projectId}-${agentId}-${i}`,
    acpSessionId: `acp-${i}`,
    agentId,
    projectId,
    cwd: `/work/${projectId}`,
    title: `${projectId} ${agentId} ${i}`,
    titleSource: 'prompt',
    createdAt: at,
    updatedAt: at
  }
}

/**
 * A Host's listing in memory: answers the window's first load and its pages
 * from a SessionListing, and when a session is added, touched or removed
 * sends the events Records sends (`session.record` or `session.removed`, and
 * `sessions.count` when a group's count changed).
 */
class ListingHost {
  readonly listing: SessionListing
  readonly fake: FakeHost

  constructor(
    readonly projects: Project[],
    readonly sessions: SessionRecord[]
  ) {
    this.listing = new SessionListing(sessions)
    this.fake = new FakeHost(
      firstLoad({
        'projects.list': () => projects,
        'sessions.summary': ({ limit, records }: { limit: number; records?: number }) =>
          this.listing.summary(
            limit,
            records,
            projects.map((p) => p.id)
          ),
        'sessions.page': (p: { projectId: string; agentId: string; before?: { updatedAt: string; id: string }; limit: number }) =>
          this.listing.page(p.projectId, p.agentId, p.before, p.limit),
        'sessions.get': ({ ids }: { ids: string[] }) => this.listing.get(ids)
      })
    ).install()
  }

  /** A session new or changed (`updatedAt` moved by a turn), as Records announces it; `countFirst` sends the count before it. */
  announce(record: SessionRecord, countFirst = false): void {
    if (!this.sessions.includes(record)) this.sessions.push(record)
    const count = this.listing.changed(record)
    const events: HostEvent[] = [{ type: 'session.record', payload: record }]
    if (count) events[countFirst ? 'unshift' : 'push']({ type: 'sessions.count', payload: count })
    this.fake.push(events)
  }

  remove(id: string): void {
    const count = this.listing.removed(id)
    this.fake.push([{ type: 'session.removed', payload: { id } }, ...(count ? [{ type: 'sessions.count' as const, payload: count }] : [])])
  }

  /** The group as the Host has it: the first `limit` ids and the count. */
  page(projectId: string, agentId: string, limit: number): { ids: string[]; count: number } {
    const page = this.listing.page(projectId, agentId, undefined, limit)
    return { ids: page.sessions.map((s) => s.id), count: page.count }
  }
}

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
})

/** What the window holds of each group is the Host's first page of that length, with the Host's count. */
function expectSameAsHost(host: ListingHost): void {
  const projects = useProjectsStore()
  for (const { id: projectId } of host.projects) {
    for (const group of projects.groupsOf(projectId)) {
      expect({ group: group.agentId, ids: group.sessions.map((s) => s.id), count: group.count }).toEqual({
        group: group.agentId,
        ...host.page(projectId, group.agentId, group.sessions.length)
      })
    }
  }
}

describe('the projects store, holding pages', () => {
  function twoProjects(): ListingHost {
    const sessions = [
      ...Array.from({ length: 130 }, (_, i) => session('alpha', 'x', i, i - (i % 3 === 2 ? 1 : 0))),
      ...Array.from({ length: 40 }, (_, i) => session('alpha', 'y', i)),
      ...Array.from({ length: 25 }, (_, i) => session('beta', 'x', i))
    ]
    return new ListingHost([project('alpha'), project('beta')], sessions)
  }

  it('asks for no whole list at start: each group’s newest page and count, then more on demand', async () => {
    const host = twoProjects()
    listenToHost()
    await useAppStore().load()
    expect(host.fake.requests.map((r) => r.method)).toContain('sessions.summary')
    expect(host.fake.requests.map((r) => r.method)).not.toContain('sessions.list')
    const projects = useProjectsStore()
    expect(projects.groupsOf('alpha').map((g) => [g.agentId, g.count, g.sessions.length])).toEqual([
      ['x', 130, FIRST_PAGE],
      ['y', 40, FIRST_PAGE]
    ])
    await projects.loadMore('alpha', 'x')
    await projects.loadMore('alpha', 'y', 100)
    expect(projects.groupsOf('alpha').map((g) => g.sessions.length)).toEqual([FIRST_PAGE + NEXT_PAGE, 40])
    expect(host.fake.sent('sessions.page')[0]).toMatchObject({ projectId: 'alpha', agentId: 'x', limit: NEXT_PAGE, before: { id: 'alpha-x-122' } })
    expectSameAsHost(host)
    expect(projects.countOf({ projectId: 'alpha' })).toBe(170)
    expect(projects.countOf({ agentId: 'x' })).toBe(155)
    expect([...projects.agentIdsWithSessions].sort()).toEqual(['x', 'y'])
  })

  it('keeps the pages and counts right as sessions are added, get a turn, are imported and deleted', async () => {
    const host = twoProjects()
    listenToHost()
    await useAppStore().load()
    const projects = useProjectsStore()
    await projects.loadMore('alpha', 'x')
    const loaded = (agentId = 'x'): string[] =>
      projects
        .groupsOf('alpha')
        .find((g) => g.agentId === agentId)!
        .sessions.map((s) => s.id)

    // Added in another window: first, and counted (whichever of the record and the count comes first).
    const made = session('alpha', 'x', 1000)
    host.announce(made)
    expect(loaded()[0]).toBe(made.id)
    const second = session('alpha', 'x', 1001)
    host.announce(second, true)
    expect(loaded().slice(0, 2)).toEqual([second.id, made.id])

    // A session far below the page gets a turn: it comes to the top; the count stays.
    const old = host.sessions.find((s) => s.id === 'alpha-x-0')!
    expect(loaded()).not.toContain(old.id)
    old.updatedAt = new Date(base + 2000 * 60_000).toISOString()
    host.announce(old)
    expect(loaded()[0]).toBe(old.id)
    // A title changed (no turn): it stays in its place.
    host.announce({ ...host.sessions.find((s) => s.id === loaded()[3])!, title: 'Renamed' })
    expect(projects.sessionById(loaded()[3])?.title).toBe('Renamed')

    // Deleted: one loaded, one not (only the count says so), one of another group.
    host.remove(loaded()[5])
    host.remove('alpha-x-1')
    host.remove('alpha-y-0')
    // Imported: older than everything loaded, so counted among the rest.
    host.announce(session('alpha', 'x', -5))
    host.announce(session('alpha', 'x', -6))
    expectSameAsHost(host)
    expect(projects.groupsOf('alpha').map((g) => [g.agentId, g.count])).toEqual([
      ['x', 130 + 2 - 2 + 2],
      ['y', 39]
    ])

    // The rest comes page by page, and joins up with what the events did.
    while (loaded().length < 132) await projects.loadMore('alpha', 'x')
    expect(loaded().slice(-2)).toEqual(['alpha-x--5', 'alpha-x--6'])
    expectSameAsHost(host)

    // The last session of a group goes: so does the group.
    for (const s of [...host.sessions].filter((s) => s.projectId === 'beta')) host.remove(s.id)
    expect(projects.groupsOf('beta')).toEqual([])
  })

  it('fetches a record it does not hold (a pane, a search hit, a busy session), without putting it in the page', async () => {
    const host = twoProjects()
    listenToHost()
    await useAppStore().load()
    const projects = useProjectsStore()
    expect(projects.sessionById('beta-x-2')).toBeUndefined()
    expect((await projects.ensureSession('beta-x-2'))?.title).toBe('beta x 2')
    expect(await projects.ensureSession('no-such-session')).toBeUndefined()
    // Asked together: one request for the ids of one tick.
    await Promise.all([projects.fetchSessions(['beta-x-3']), projects.fetchSessions(['beta-x-4', 'beta-x-5'])])
    expect(host.fake.sent('sessions.get').at(-1)).toEqual({ ids: ['beta-x-3', 'beta-x-4', 'beta-x-5'] })
    expect(projects.groupsOf('beta')[0].sessions.map((s) => s.id)).not.toContain('beta-x-2')
    expect(projects.groupsOf('beta')[0].count).toBe(25)

    // A session at work that the pages do not hold is asked for as its state arrives.
    useSessionsStore().receiveState({ id: 'alpha-y-1', status: 'running' })
    await flushPromises()
    expect(projects.sessionById('alpha-y-1')?.title).toBe('alpha y 1')
  })
})

describe('the virtual sidebar', () => {
  const HEIGHT = { project: 118, agent: 35, session: 32, more: 28 }
  const VIEW = 600
  /** At most a screenful of sessions, and the list's overscan (8) on each side. */
  const SCREENFUL = Math.ceil(VIEW / 32) + 1 + 2 * 8

  // happy-dom lays nothing out: the sidebar is given a height, and each row the height of its kind
  // (plain overrides, not spies: a spy would keep every element it was called on).
  const clientHeight = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight')
  beforeEach(() => {
    Object.defineProperty(HTMLElement.prototype, 'clientHeight', {
      configurable: true,
      get(this: HTMLElement) {
        return this.dataset.testid === 'project-list' ? VIEW : 0
      }
    })
    Object.defineProperty(HTMLElement.prototype, 'getBoundingClientRect', {
      configurable: true,
      value(this: HTMLElement) {
        const kind = this.classList.contains('row')
          ? (Object.keys(HEIGHT) as (keyof typeof HEIGHT)[]).find((k) => this.classList.contains(k))
          : undefined
        const height = kind ? HEIGHT[kind] : this.dataset.testid === 'project-list' ? VIEW : 0
        return { x: 0, y: 0, top: 0, left: 0, right: 280, bottom: height, width: 280, height, toJSON: () => ({}) }
      }
    })
  })
  afterEach(() => {
    Object.defineProperty(HTMLElement.prototype, 'clientHeight', clientHeight!)
    // The override goes; Element's own answers again.
    delete (HTMLElement.prototype as Partial<HTMLElement>).getBoundingClientRect
  })

  /** One project whose agent has 100,000 sessions (made up as the pages are asked for), and a second, small project. */
  function hugeProject(): FakeHost {
    const TOTAL = 100_000
    const made = (i: number): SessionRecord => session('big', 'x', i, TOTAL - i)
    const fake = new FakeHost({
      'sessions.page': (p: { before?: { id: string }; limit: number }) => {
        const from = p.before ? Number(p.before.id.split('-').at(-1)) + 1 : 0
        return { sessions: Array.from({ length: Math.min(p.limit, TOTAL - from) }, (_, k) => made(from + k)), count: TOTAL }
      },
      'sessions.get': ({ ids }: { ids: string[] }) => ids.map((id) => made(Number(id.split('-').at(-1))))
    }).install()
    useAgentsStore().setAll([{ id: 'x', name: 'Agent X', transport: { kind: 'process', command: 'x', args: [], env: {} } }], [])
    useProjectsStore().setAll(
      [project('big'), project('small')],
      [
        { projectId: 'big', agentId: 'x', count: TOTAL, sessions: Array.from({ length: FIRST_PAGE }, (_, i) => made(i)) },
        { projectId: 'small', agentId: 'x', count: 2, sessions: [session('small', 'x', 2), session('small', 'x', 1)] }
      ]
    )
    return fake
  }

  async function mountList() {
    const wrapper = mount(ProjectList, { attachTo: document.body })
    await flushPromises()
    await nextTick()
    return wrapper
  }
  const items = (): HTMLElement[] => [...document.querySelectorAll<HTMLElement>('[data-testid=session-item]')]
  const ids = (): string[] => items().map((e) => e.dataset.sessionId!)
  const scroller = (): HTMLElement => document.querySelector<HTMLElement>('[data-testid=project-list]')!
  async function scrollTo(top: number): Promise<void> {
    scroller().scrollTop = top
    scroller().dispatchEvent(new Event('scroll'))
    await nextTick()
  }

  it('puts only the rows in view in the page, however many sessions are loaded, and says how many more there are', async () => {
    const fake = hugeProject()
    await mountList()
    expect(ids()).toEqual(Array.from({ length: FIRST_PAGE }, (_, i) => `big-x-${i}`).concat(['small-x-2', 'small-x-1']))
    // The times in a row's tooltips are written once the pointer is on it (the first paint makes no date formatter).
    const open = items()[0].querySelector<HTMLElement>('[data-testid=session-open]')!
    expect(open.title).not.toContain('Updated')
    expect(open.querySelector('.time')?.hasAttribute('title')).toBe(false)
    open.dispatchEvent(new Event('pointerenter'))
    await nextTick()
    expect(open.title).toMatch(/\nUpdated .*2026/)
    expect(open.querySelector('.time')?.getAttribute('title')).toMatch(/ago$/)
    const more = document.querySelector<HTMLButtonElement>('[data-testid=show-more-sessions]')!
    expect(more.textContent?.trim()).toBe(`Show ${NEXT_PAGE} more of ${(100_000).toLocaleString()}`)
    // A project folded: its rows leave the list, its head says how many it has.
    const smallHead = document.querySelector<HTMLElement>('[data-project-id="small"] [data-testid=project-head]')!
    smallHead.click()
    await nextTick()
    expect(ids().filter((id) => id.startsWith('small'))).toEqual([])
    expect(smallHead.querySelector('.count')?.textContent).toBe('2')
    smallHead.click()
    await nextTick()
    expect(ids().filter((id) => id.startsWith('small'))).toEqual(['small-x-2', 'small-x-1'])

    // A thousand sessions loaded: the page still holds about a screenful of rows.
    await useProjectsStore().loadMore('big', 'x', 500)
    await useProjectsStore().loadMore('big', 'x', 500)
    await nextTick()
    expect(fake.sent('sessions.page')).toHaveLength(2)
    const loaded = FIRST_PAGE + 1000
    expect(useProjectsStore().groupsOf('big')[0].sessions).toHaveLength(loaded)
    expect(items().length).toBeLessThanOrEqual(SCREENFUL)
    // Scrolled to the middle: the rows there, and none of the first.
    await scrollTo(HEIGHT.project + HEIGHT.agent + 500 * HEIGHT.session)
    expect(ids()).toContain('big-x-500')
    expect(ids()).not.toContain('big-x-0')
    expect(items().length).toBeLessThanOrEqual(SCREENFUL)
  })

  it('says in a row’s tooltip what the agent waits on cut, its hidden characters shown, as every agent string in a tooltip', async () => {
    hugeProject()
    await mountList()
    // The Host keeps up to 10,000 characters of a permission request's title; an agent's error is its own words too.
    const title = `Delete report\u202Efdp.exe ${'x'.repeat(9_900)}`
    useSessionsStore().receiveState({ id: 'big-x-0', status: 'running', permissions: [{ requestId: 'r', title, options: [] }] })
    useSessionsStore().receiveState({ id: 'big-x-1', status: 'idle', error: 'failed \u202Etxt.exe' })
    await nextTick()
    const [waiting, failed] = items().map((item) => item.querySelector<HTMLElement>('[data-testid=session-open]')!.title)
    expect(waiting).toContain('Waiting for your permission: Delete report⟨RLO⟩fdp.exe xxx')
    expect(waiting).toContain('… (8 KB more)')
    expect(waiting.length).toBeLessThan(2_200)
    expect(failed).toContain('Error: failed ⟨RLO⟩txt.exe')
    expect(`${waiting}${failed}`).not.toContain('\u202E')
  })

  it('goes from row to row with ↑/↓, Home and End, keeps the focused row while scrolled away, and shows more with Enter', async () => {
    const fake = hugeProject()
    await useProjectsStore().loadMore('big', 'x', 200)
    await mountList()
    const active = (): string | undefined => (document.activeElement?.closest('[data-row-key]') as HTMLElement | null)?.dataset.rowKey
    const key = (name: string): Promise<void> => {
      document.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key: name, bubbles: true }))
      return flushPromises().then(() => nextTick())
    }

    document.querySelector<HTMLElement>('[data-testid=project-head]')!.focus()
    expect(active()).toBe('project:big')
    await key('ArrowDown') // the agent's heading is passed over
    expect(active()).toBe('session:big-x-0')
    expect(ids()).not.toContain('big-x-30')
    for (let i = 0; i < 30; i++) await key('ArrowDown')
    // Past the rows first put in the page: each came into it as the focus reached it.
    expect(active()).toBe('session:big-x-30')
    await key('ArrowUp')
    expect(active()).toBe('session:big-x-29')

    // Scrolled far away, the focused row stays in the page, and keeps the focus.
    await scrollTo(HEIGHT.project + 180 * HEIGHT.session)
    expect(ids()).toContain('big-x-29')
    expect(ids()).toContain('big-x-180')
    expect(active()).toBe('session:big-x-29')

    await key('Home')
    expect(active()).toBe('project:big')
    await key('End')
    expect(active()).toBe('session:small-x-1')

    // "Show more" takes the focus like a row, and Enter (a click) loads the next page.
    for (let i = 0; i < 3; i++) await key('ArrowUp')
    expect(active()).toBe('more:big:x')
    ;(document.activeElement as HTMLButtonElement).click()
    await flushPromises()
    expect(fake.sent('sessions.page').at(-1)).toMatchObject({ before: { id: 'big-x-207' }, limit: NEXT_PAGE })
    expect(useProjectsStore().groupsOf('big')[0].sessions).toHaveLength(258)
    expect(document.querySelector('[data-row-key="more:big:x"]')?.textContent).toContain(`Show ${NEXT_PAGE} more of ${(100_000).toLocaleString()}`)
  })

  it('loads first only the first projects’ sessions, and a group’s first page once its rows scroll into view', async () => {
    // 30 projects of 10 sessions: the first load's records (FIRST_RECORDS) cover the first 15 projects' first pages.
    const names = Array.from({ length: 30 }, (_, i) => `p${String(i).padStart(2, '0')}`)
    const host = new ListingHost(
      names.map(project),
      names.flatMap((name) => Array.from({ length: 10 }, (_, i) => session(name, 'x', i)))
    )
    useAgentsStore().setAll([{ id: 'x', name: 'Agent X', transport: { kind: 'process', command: 'x', args: [], env: {} } }], [])
    listenToHost()
    await useAppStore().load()
    expect(host.fake.sent('sessions.summary')).toEqual([{ limit: FIRST_PAGE, records: FIRST_RECORDS }])
    expect(useProjectsStore().groupsOf('p14')[0].sessions).toHaveLength(FIRST_PAGE)
    expect(useProjectsStore().groupsOf('p15')[0]).toMatchObject({ count: 10, sessions: [] })
    await mountList()
    expect(ids().slice(0, FIRST_PAGE)).toEqual(Array.from({ length: FIRST_PAGE }, (_, i) => `p00-x-${9 - i}`))
    expect(document.querySelectorAll('[data-testid=session-pending]')).toHaveLength(0)
    expect(host.fake.sent('sessions.page')).toEqual([])

    // At the end of the list: the last projects' rows are pending, then their first pages come, only theirs.
    await scrollTo(100_000)
    await flushPromises()
    await nextTick()
    const asked = (host.fake.sent('sessions.page') as { projectId: string; limit: number }[]).map((p) => [p.projectId, p.limit])
    expect(asked.length).toBeGreaterThan(0)
    expect(asked.length).toBeLessThan(15)
    expect(asked).toContainEqual(['p29', FIRST_PAGE])
    expect(document.querySelectorAll('[data-testid=session-pending]')).toHaveLength(0)
    expect(ids().filter((id) => id.startsWith('p29'))).toEqual(Array.from({ length: FIRST_PAGE }, (_, i) => `p29-x-${9 - i}`))
    expect(document.querySelector('[data-row-key="more:p29:x"]')?.textContent).toContain('Show 2 more of 10')
    expectSameAsHost(host)
  })

  it('lists a session open in a pane in its place even when its page is not loaded, and counts it out of the rest', async () => {
    hugeProject()
    await useProjectsStore().fetchSessions(['big-x-90000'])
    usePanesStore().show('big-x-90000')
    await mountList()
    await scrollTo(0)
    const row = document.querySelector('[data-row-key="session:big-x-90000"]')
    expect(row).not.toBeNull()
    expect(document.querySelector('[data-row-key="more:big:x"]')?.textContent).toContain(`Show ${NEXT_PAGE} more of ${(100_000).toLocaleString()}`)
    expect(
      useProjectsStore()
        .groupsOf('big')[0]
        .sessions.map((s) => s.id)
    ).not.toContain('big-x-90000')
    // Right after the loaded page, before "Show more".
    const keys = [...document.querySelectorAll<HTMLElement>('[data-row-key]')].map((e) => e.dataset.rowKey)
    expect(keys.indexOf('session:big-x-90000')).toBe(keys.indexOf('session:big-x-7') + 1)
    expect(keys.indexOf('more:big:x')).toBe(keys.indexOf('session:big-x-90000') + 1)
  })
})
