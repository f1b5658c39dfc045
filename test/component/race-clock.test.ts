// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { RaceComparison, RaceRow } from '../../shared/race'
import RacePage from '../../renderer/src/components/races/RacePage.vue'
import { useRacesStore } from '../../renderer/src/stores/races'
import { FakeHost } from './fake-host'

/**
 * The race page's times: a racer's time counts up each second while it runs, and stays put once it has ended;
 * a page where nothing runs keeps no clock of its own ticking (issue 40: nothing when nothing happens), only the
 * window's half-minute one (time.ts, useNow).
 */

const START = Date.parse('2026-03-01T10:00:00.000Z')

function row(state: RaceRow['state'], endedAt?: string): RaceRow {
  return {
    agentId: 'a1',
    name: 'Scripted',
    sessionId: 's1',
    state,
    startedAt: new Date(START).toISOString(),
    ...(endedAt ? { endedAt } : {}),
    files: [],
    added: 0,
    removed: 0,
    spend: null
  }
}

function comparison(rows: RaceRow[]): RaceComparison {
  return {
    race: { id: 'r1', projectId: 'p1', prompt: 'Fix the cart', createdAt: new Date(START).toISOString(), baseBranch: 'main', racers: rows },
    rows
  }
}

beforeEach(() => {
  vi.useFakeTimers({ now: START + 5_000 })
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  new FakeHost().install()
})

afterEach(() => {
  vi.useRealTimers()
})

describe('the race page’s clock', () => {
  it('counts a running racer’s time up each second, and ticks no more once nothing runs', async () => {
    const races = useRacesStore()
    races.comparison = comparison([row('running')])
    const page = mount(RacePage, { attachTo: document.body })
    await flushPromises()
    const time = (): string => page.get('[data-testid=race-time]').text()
    expect(time()).toBe('5 s')
    await vi.advanceTimersByTimeAsync(3_000)
    expect(time()).toBe('8 s')

    // It ends: its time stays what it took, and the only clock left is the window's half-minute one.
    races.comparison = comparison([row('done', new Date(START + 9_000).toISOString())])
    await flushPromises()
    expect(time()).toBe('9 s')
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(5_000)
    expect(time()).toBe('9 s')

    // A check starts running: the clock comes back, and its time counts up.
    races.comparison = comparison([
      {
        ...row('done', new Date(START + 9_000).toISOString()),
        check: { command: 'npm test', status: 'running', startedAt: new Date(Date.now()).toISOString() }
      }
    ])
    await flushPromises()
    expect(vi.getTimerCount()).toBe(2)
    await vi.advanceTimersByTimeAsync(2_000)
    expect(page.get('[data-testid=race-check]').text()).toBe('Running… 2 s')
    page.unmount()
    expect(vi.getTimerCount()).toBe(0)
  })
})
