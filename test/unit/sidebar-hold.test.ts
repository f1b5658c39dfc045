import { describe, expect, it } from 'vitest'
import type { Project, SessionRecord } from '../../shared/domain'
import { holdOrder, sidebarRows } from '../../renderer/src/components/sidebar/sidebar-rows'
import type { AgentGroup } from '../../renderer/src/stores/projects'

/** The sidebar's rows held in the order they had while the user points at them or has the focus in them. */

const held = (keys: string[]) => new Map(keys.map((key, index) => [key, index]))

describe('holdOrder', () => {
  it('keeps the order held, whatever order the items come in now', () => {
    expect(holdOrder(['c', 'a', 'b'], (x) => x, held(['a', 'b', 'c']))).toEqual(['a', 'b', 'c'])
  })

  it('puts a new item after the one it follows now, several in the order they came', () => {
    expect(holdOrder(['n1', 'n2', 'b', 'a'], (x) => x, held(['a', 'b']))).toEqual(['n1', 'n2', 'a', 'b'])
    expect(holdOrder(['b', 'new', 'a'], (x) => x, held(['a', 'b']))).toEqual(['a', 'b', 'new'])
    // Gone: simply not there.
    expect(holdOrder(['b'], (x) => x, held(['a', 'b']))).toEqual(['b'])
  })
})

describe('sidebarRows with an order held', () => {
  const at = '2026-01-01T00:00:00.000Z'
  const project: Project = { id: 'p', name: 'p', cwd: '/p', createdAt: at }
  const session = (id: string, agentId: string, updatedAt: string): SessionRecord => ({
    id,
    acpSessionId: null,
    agentId,
    projectId: 'p',
    cwd: '/p',
    title: id,
    titleSource: 'user',
    createdAt: at,
    updatedAt
  })
  const groups: AgentGroup[] = [
    // The older session had a turn: it is the newest now, and its agent's group went first.
    { agentId: 'b', count: 1, sessions: [session('b1', 'b', '2026-01-03T00:00:00.000Z')] },
    { agentId: 'a', count: 2, sessions: [session('a1', 'a', '2026-01-02T00:00:00.000Z'), session('a2', 'a', '2026-01-01T00:00:00.000Z')] }
  ]
  const input = { projects: [project], groupsOf: () => groups, collapsed: () => false, agentFilter: '', pinned: [] }

  it('rows come newest first, and stay as they were while held', () => {
    expect(sidebarRows(input).map((r) => r.key)).toEqual(['project:p', 'agent:p:b', 'session:b1', 'agent:p:a', 'session:a1', 'session:a2'])
    const before = ['project:p', 'agent:p:a', 'session:a2', 'session:a1', 'agent:p:b', 'session:b1']
    expect(sidebarRows({ ...input, held: held(before) }).map((r) => r.key)).toEqual(before)
  })
})
