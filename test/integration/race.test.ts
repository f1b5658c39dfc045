import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { RaceComparison } from '../../shared/race'
import { gitIn, openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * A race (issue 39, point 3): one prompt to three agents at once, each in its own worktree; one fails to start and
 * the others go on; the comparison's files, line counts, spend and time; the project's check command passing,
 * failing and cancelled while it hangs; "Keep this one" merging its branch and the others' worktrees removed.
 * The same scripted agent plays each racer, following its own script for the one prompt (SCRIPTED_AGENT_SCRIPTS).
 */

let root: string
let host: Host
let projectDir: string
let projectId: string
const agents: Record<'right' | 'wrong' | 'broken', string> = { right: '', wrong: '', broken: '' }
const PROMPT = 'Fix the answer'

async function repository(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true })
  gitIn(dir, 'init', '--quiet', '-b', 'main')
  gitIn(dir, 'config', 'user.name', 'Test User')
  gitIn(dir, 'config', 'user.email', 'test@example.com')
  await writeFile(join(dir, 'answer.txt'), 'start\n')
  gitIn(dir, 'add', '-A')
  gitIn(dir, 'commit', '--quiet', '-m', 'start')
}

async function scripted(name: string, script: string, env: Record<string, string> = {}): Promise<string> {
  const scripts = join(root, `${name}-scripts.json`)
  await writeFile(scripts, JSON.stringify({ [PROMPT]: script }))
  const definition = scriptedAgent(join(root, `${name}-state`), { SCRIPTED_AGENT_SCRIPTS: scripts, SCRIPTED_AGENT_TURN_USAGE: '1', ...env }, name)
  return (await host.request('agents.add', definition)).id
}

async function compared(raceId: string, until: (c: RaceComparison) => boolean, what: string): Promise<RaceComparison> {
  let last: RaceComparison | undefined
  return waitUntil(what, async () => {
    last = await host.request('races.compare', { raceId })
    return until(last) ? last : null
  }).catch((error: Error) => {
    throw new Error(`${error.message}; last: ${JSON.stringify(last?.rows.map((r) => ({ name: r.name, state: r.state, check: r.check })))}`)
  })
}

beforeAll(async () => {
  root = await tempDir('race')
  projectDir = join(root, 'project')
  await repository(projectDir)
  host = await openHost(join(root, 'data'))
  agents.right = await scripted('Right', '/disk answer.txt right\\n\n/disk notes.md one\\ntwo\\n\n/cost 0.25 USD')
  agents.wrong = await scripted('Wrong', '/disk answer.txt wrong\\n')
  agents.broken = await scripted('Broken', '/say never', { SCRIPTED_AGENT_NEW: 'fail' })
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterAll(async () => {
  await host?.close()
  await removeDir(root)
})

describe('a race across three agents', () => {
  let raceId = ''
  const sessionOf = (c: RaceComparison, agentId: string): string => c.rows.find((r) => r.agentId === agentId)?.sessionId ?? ''

  it('starts each in its own worktree and sends them the prompt at once; the one that cannot start says why and the others go on', async () => {
    const race = await host.request('races.start', {
      projectId,
      prompt: PROMPT,
      entries: [{ agentId: agents.right }, { agentId: agents.wrong }, { agentId: agents.broken }]
    })
    raceId = race.id
    expect(race.racers.map((r) => r.state)).toEqual(['running', 'running', 'failed'])
    expect(race.racers[2]?.error).toMatch(/^Broken could not start a session: The workspace index could not be opened/)
    const done = await compared(raceId, (c) => c.rows.filter((r) => r.state === 'done').length === 2, 'both racers done')
    const [right, wrong, broken] = done.rows
    expect(right).toMatchObject({ state: 'done', stopReason: 'end_turn', added: 3, removed: 1 })
    expect(right?.files).toEqual([
      { path: 'answer.txt', added: 1, removed: 1, binary: false },
      { path: 'notes.md', added: 2, removed: 0, binary: false }
    ])
    expect(right?.spend?.cost).toEqual({ USD: 0.25 })
    expect(right?.spend?.tokens.total).toBeGreaterThan(0)
    expect(Date.parse(right?.endedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(right?.startedAt ?? ''))
    expect(wrong).toMatchObject({ state: 'done', added: 1, removed: 1, files: [{ path: 'answer.txt', added: 1, removed: 1, binary: false }] })
    expect(broken).toMatchObject({ state: 'failed', files: null, filesNote: 'No session: it did not start' })
    // Each in its own worktree, on its own branch; the project's folder untouched.
    const [a, b] = [right, wrong].map((r) => host.request('sessions.get', { ids: [r?.sessionId ?? ''] }).then((s) => s[0]))
    const [first, second] = await Promise.all([a, b])
    expect(first?.raceId).toBe(raceId)
    expect(second?.raceId).toBe(raceId)
    expect(first?.worktree?.path).not.toBe(second?.worktree?.path)
    expect(await readFile(join(first?.worktree?.path ?? '', 'answer.txt'), 'utf8')).toBe('right\n')
    expect(await readFile(join(second?.worktree?.path ?? '', 'answer.txt'), 'utf8')).toBe('wrong\n')
    expect(await readFile(join(projectDir, 'answer.txt'), 'utf8')).toBe('start\n')
    // At once: the prompt went to each only after every session was made.
    const prompted = await Promise.all(
      [first, second].map(async (s) => (await host.request('sessions.open', { id: s?.id ?? '' })).records.find((r) => r.t === 'prompt')?.at ?? '')
    )
    const lastMade =
      [first, second]
        .map((s) => s?.createdAt ?? '')
        .sort()
        .at(-1) ?? ''
    expect(prompted.every((at) => at >= lastMade)).toBe(true)
    expect(race.racers[0]?.startedAt).toBe(race.racers[1]?.startedAt)
    // Ordinary sessions afterwards: listed with the project's, and in the spend report.
    const listed = await host.request('sessions.list', { projectId })
    expect(listed.map((s) => s.id)).toEqual(expect.arrayContaining([first?.id, second?.id]))
    const spend = await host.request('spend.report', {})
    expect(spend.sessions.find((s) => s.id === first?.id)?.cost).toEqual({ USD: 0.25 })
    expect((await host.request('races.list', { projectId })).map((r) => r.id)).toEqual([raceId])
  })

  it('runs the check command in each worktree on request: pass and fail by exit code, the output kept; a hanging one is cancelled', async () => {
    const before = await host.request('races.compare', { raceId })
    const right = sessionOf(before, agents.right)
    const wrong = sessionOf(before, agents.wrong)
    await expect(host.request('races.runCheck', { raceId, sessionId: right })).rejects.toThrow(/no check command yet/)
    await host.request('projects.setCheckCommand', { projectId, command: 'echo checking; grep -q right answer.txt' })
    await host.request('races.runCheck', { raceId, sessionId: right })
    await host.request('races.runCheck', { raceId, sessionId: wrong })
    const checked = await compared(raceId, (c) => c.rows.every((r) => !r.sessionId || (r.check && r.check.status !== 'running')), 'both checks over')
    expect(checked.checkCommand).toBe('echo checking; grep -q right answer.txt')
    expect(checked.rows[0]?.check).toMatchObject({ status: 'passed', exitCode: 0 })
    expect(checked.rows[1]?.check).toMatchObject({ status: 'failed', exitCode: 1, message: 'Exited with code 1' })
    expect((await host.request('races.checkOutput', { raceId, sessionId: wrong })).output).toBe('checking\n')

    await host.request('projects.setCheckCommand', { projectId, command: 'echo waiting; sleep 600' })
    const started = await host.request('races.runCheck', { raceId, sessionId: wrong })
    expect(started.racers[1]?.check).toMatchObject({ status: 'running', command: 'echo waiting; sleep 600' })
    await waitUntil(
      'the hanging check printed',
      async () => (await host.request('races.checkOutput', { raceId, sessionId: wrong })).output === 'waiting\n'
    )
    const cancelled = await host.request('races.cancelCheck', { raceId, sessionId: wrong })
    expect(cancelled.racers[1]?.check).toMatchObject({ status: 'cancelled', message: 'Cancelled' })
    expect(Date.parse(cancelled.racers[1]?.check?.endedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(started.racers[1]?.check?.startedAt ?? ''))
  })

  it('keeps one: its work committed and merged into the base branch; then the others’ worktrees and branches go', async () => {
    const before = await host.request('races.compare', { raceId })
    const right = sessionOf(before, agents.right)
    const wrong = sessionOf(before, agents.wrong)
    const wrongTree = (await host.request('sessions.get', { ids: [wrong] }))[0]?.worktree
    await expect(host.request('races.removeOthers', { raceId })).rejects.toThrow(/Keep one of the racers first/)
    const kept = await host.request('races.keep', { raceId, sessionId: right })
    expect(kept.merge).toMatchObject({ merged: true, into: 'main' })
    expect(kept.committed).toBe(2)
    expect(kept.others).toEqual([{ sessionId: wrong, name: 'Wrong', branch: wrongTree?.branch, uncommitted: ['answer.txt'] }])
    expect(gitIn(projectDir, 'show', 'main:answer.txt')).toBe('right')
    expect(gitIn(projectDir, 'show', 'main:notes.md')).toBe('one\ntwo')
    await expect(host.request('races.keep', { raceId, sessionId: wrong })).rejects.toThrow(/already kept Right/)

    const removal = await host.request('races.removeOthers', { raceId })
    expect(removal).toEqual({ removed: [wrong], refused: [] })
    expect(existsSync(wrongTree?.path ?? '')).toBe(false)
    expect(gitIn(projectDir, 'branch', '--list', wrongTree?.branch ?? '')).toBe('')
    const after = await host.request('races.compare', { raceId })
    expect(after.race.kept).toMatchObject({ sessionId: right, into: 'main' })
    expect(after.rows[1]).toMatchObject({ files: null, filesNote: 'Its worktree and branch were removed' })
    // The other's conversation stays, to read; a prompt there says why it cannot go on.
    await expect(host.request('sessions.prompt', { id: wrong, text: 'more' })).rejects.toThrow(
      /were removed unmerged; its conversation stays to read/
    )
    expect((await host.request('changes.list', { id: wrong })).reason).toMatch(/removed unmerged, when another session of its race was kept/)
    // The kept one's conversation and worktree stay, an ordinary session.
    expect(after.rows[0]?.files?.map((f) => f.path)).toEqual(['answer.txt', 'notes.md'])
  })
})

describe('what a race refuses or reports', () => {
  it('a folder that is not a git repository: says the race needs one, and starts nothing', async () => {
    const plain = join(root, 'plain')
    await mkdir(plain)
    const plainId = (await host.request('projects.add', { cwd: plain })).id
    const count = (await host.request('sessions.list', {})).length
    const refused = await host.handle('races.start', {
      projectId: plainId,
      prompt: PROMPT,
      entries: [{ agentId: agents.right }, { agentId: agents.wrong }]
    })
    expect(refused).toMatchObject({ ok: false, error: { code: 'not_a_repository' } })
    expect(!refused.ok && refused.error.message).toBe(
      `A race gives each agent its own worktree and branch, so plain must be a git repository with a commit; ${plain} is not one: run "git init" there and commit, then start the race again.`
    )
    expect((await host.request('sessions.list', {})).length).toBe(count)
  })

  it('a preset races as itself: its name in the race, its session started from it (in a worktree, though the preset says folder)', async () => {
    const preset = await host.request('presets.add', { name: 'Careful', agentId: agents.wrong, systemPrompt: 'Be careful.', isolation: 'folder' })
    const race = await host.request('races.start', {
      projectId,
      prompt: PROMPT,
      entries: [{ agentId: agents.right }, { agentId: agents.right, presetId: preset.id }]
    })
    expect(race.racers.map((r) => [r.name, r.agentId, r.presetId])).toEqual([
      ['Right', agents.right, undefined],
      ['Careful', agents.wrong, preset.id]
    ])
    const [record] = await host.request('sessions.get', { ids: [race.racers[1]?.sessionId ?? ''] })
    expect(record).toMatchObject({ agentId: agents.wrong, preset: { id: preset.id, name: 'Careful' }, raceId: race.id })
    expect(record?.worktree?.path).toBeTruthy()
    await compared(race.id, (c) => c.rows.every((r) => r.state === 'done'), 'both racers done')
  })

  it('a merge that conflicts: said file by file, nothing merged, the race keeps none', async () => {
    const race = await host.request('races.start', { projectId, prompt: PROMPT, entries: [{ agentId: agents.right }, { agentId: agents.wrong }] })
    const done = await compared(race.id, (c) => c.rows.every((r) => r.state === 'done'), 'both racers done')
    // Meanwhile the base branch changed the same line.
    await writeFile(join(projectDir, 'answer.txt'), 'changed on main\n')
    gitIn(projectDir, 'commit', '--quiet', '-am', 'main moves on')
    const head = gitIn(projectDir, 'rev-parse', 'main')
    const kept = await host.request('races.keep', { raceId: race.id, sessionId: done.rows[1]?.sessionId ?? '' })
    expect(kept.merge.merged).toBe(false)
    expect(kept.merge.conflicts.map((c) => c.path)).toEqual(['answer.txt'])
    expect(kept.merge.message).toMatch(/conflicts in 1 file; nothing was changed/)
    expect(gitIn(projectDir, 'rev-parse', 'main')).toBe(head)
    expect((await host.request('races.compare', { raceId: race.id })).race.kept).toBeUndefined()
  })
})

describe('races.json across a restart', () => {
  it('a racer and a check that were running when the Host stopped read back as cut short; what cannot be read is said, not kept', async () => {
    const dataDir = join(root, 'restart-data')
    await mkdir(dataDir)
    const race = {
      id: 'r1',
      projectId: 'p1',
      prompt: 'Fix it',
      createdAt: new Date().toISOString(),
      baseBranch: 'main',
      racers: [
        {
          agentId: 'a',
          name: 'Alpha',
          sessionId: 's1',
          state: 'running',
          check: { command: 'npm test', status: 'running', startedAt: new Date().toISOString() }
        },
        { agentId: 'b', name: 'Beta', sessionId: 's2', state: 'done', stopReason: 'end_turn' }
      ]
    }
    await writeFile(join(dataDir, 'races.json'), JSON.stringify({ version: 1, races: [race, { id: 7 }] }))
    const again = await openHost(dataDir)
    try {
      const [read] = await again.request('races.list', {})
      expect(read?.racers[0]).toMatchObject({
        state: 'failed',
        error: 'Switchboard stopped before its turn ended; open the session to continue it',
        check: { status: 'error', message: 'Switchboard stopped while it ran' }
      })
      expect(read?.racers[1]).toMatchObject({ state: 'done' })
      expect((await again.request('app.info', {})).warnings).toContain('1 race in races.json could not be read and was left out.')
    } finally {
      await again.close()
    }
    // A file that is not JSON is moved aside (kept for the user), and races start empty.
    await writeFile(join(dataDir, 'races.json'), '{ torn')
    const third = await openHost(dataDir)
    try {
      expect(await third.request('races.list', {})).toEqual([])
      expect(
        (await third.request('app.info', {})).warnings.some((w) =>
          /^races\.json could not be read .* it was moved to .*races\.json\.unreadable-/.test(w)
        )
      ).toBe(true)
      expect((await readdir(dataDir)).some((f) => f.startsWith('races.json.unreadable-'))).toBe(true)
    } finally {
      await third.close()
    }
  })
})
