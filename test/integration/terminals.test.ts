import { existsSync, readFileSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { PendingPermission } from '../../shared/domain'
import { allowCommands, entriesOf, fold, isProcessRunning, openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * terminal/create|output|wait_for_exit|kill|release, answered by the Host for
 * the agent; a command runs only once the user allowed it (in the permission
 * request the agent made for it, or when asked) or a rule of theirs covers it.
 */

let root: string
let projectDir: string
let host: Host
let sessionId: string

beforeEach(async () => {
  root = await tempDir('terminals')
  projectDir = join(root, 'project')
  await mkdir(projectDir)
  host = await openHost(join(root, 'data'))
  const project = await host.request('projects.add', { cwd: projectDir })
  const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
  sessionId = (await host.request('sessions.new', { projectId: project.id, agentId: agent.id })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function reply(text: string): Promise<string> {
  await host.request('sessions.prompt', { id: sessionId, text })
  const thread = fold((await host.request('sessions.open', { id: sessionId })).records)
  return (entriesOf(thread, 'assistant').at(-1) as { text: string }).text
}

describe('terminals', () => {
  // These tests are about what a command does: the user allows each one when asked.
  beforeEach(() => void allowCommands(host))

  it('runs a command in the project folder and gives its output and exit code; the thread shows it', async () => {
    expect(await reply('/terminal echo hello from $PWD && exit 3')).toBe(
      `exit=3 signal=none truncated=false output=${JSON.stringify(`hello from ${projectDir}\n`)}`
    )
    const thread = fold((await host.request('sessions.open', { id: sessionId })).records)
    const call = entriesOf(thread, 'tool_call')[0] as { content: { type: string; terminalId?: string }[]; status: string }
    expect(call.status).toBe('failed')
    const terminal = thread.terminals[call.content[0].terminalId!]
    expect(terminal).toEqual({
      command: 'echo hello from $PWD && exit 3',
      output: `hello from ${projectDir}\n`,
      exitStatus: { exitCode: 3, signal: null }
    })
  })

  it('keeps only the last outputByteLimit bytes, cut at a character boundary', async () => {
    const text = await reply("/terminal-limit 10 printf 'ééééé-abcdef'")
    // 'ééééé-abcdef' is 16 bytes; the last 10 would start inside an 'é', so it keeps 9.
    expect(text).toBe('exit=0 signal=none truncated=true output="é-abcdef"')
  })

  it('kills a running command on request, and the agent still reads its output', async () => {
    const text = await reply('/terminal-kill 300 echo started; sleep 30; echo never')
    expect(text).toMatch(/^exit=none signal=SIGKILL truncated=false output="started\\n"$/)
  })

  it.skipIf(process.platform === 'win32')('kills what the agent left running when the session closes', async () => {
    const pidFile = join(root, 'sleeper.pid')
    await reply(`/terminal-leave sh -c 'echo $$ > ${pidFile}; exec sleep 60'`)
    await expect.poll(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '').toBe(true)
    const pid = Number(readFileSync(pidFile, 'utf8'))
    expect(() => process.kill(pid, 0)).not.toThrow()
    await host.request('sessions.close', { id: sessionId })
    await expect.poll(() => isProcessRunning(pid)).toBe(false)
  })
})

describe('a command the agent runs through terminal/create', () => {
  /** Every permission request the session showed, by requestId (from the state events). */
  let shown: Map<string, PendingPermission>
  beforeEach(() => {
    shown = new Map()
    host.events.subscribe((batch) => {
      for (const event of batch) {
        if (event.type === 'session.state') for (const p of event.payload.permissions ?? []) shown.set(p.requestId, p)
      }
    })
  })

  const pending = async (): Promise<PendingPermission[]> => (await host.request('sessions.open', { id: sessionId })).state.permissions ?? []
  const waitForQuestion = (): Promise<PendingPermission> => waitUntil('the question', async () => (await pending())[0])

  /** Starts a turn; returns its last message once answered (`turn`), the turn itself running meanwhile. */
  function start(text: string): { done: Promise<string> } {
    return { done: host.request('sessions.prompt', { id: sessionId, text }).then(async () => lastMessage()) }
  }
  async function lastMessage(): Promise<string> {
    const thread = fold((await host.request('sessions.open', { id: sessionId })).records)
    return (entriesOf(thread, 'assistant').at(-1) as { text: string }).text
  }

  it('is asked when nothing approved it, and nothing runs while the card waits nor after "Reject"', async () => {
    const marker = join(projectDir, 'ran.txt')
    const turn = start(`/terminal touch ${marker}`)
    const question = await waitForQuestion()
    expect(question.title).toBe(`Run the command touch ${marker}`)
    expect(question.options.map((o) => o.name)).toEqual(['Allow once', 'Always allow', 'Reject'])
    expect(question.always).toMatchObject({ remembered: true, scope: { kind: 'command', command: `touch ${marker}` } })
    // In the inbox too, answerable there.
    const inbox = await host.request('inbox.list', {})
    expect(inbox.some((item) => item.kind === 'permission' && item.permission.requestId === question.requestId)).toBe(true)
    expect(existsSync(marker)).toBe(false)
    await host.request('sessions.respondPermission', { id: sessionId, requestId: question.requestId, optionId: 'reject' })
    expect(await turn.done).toBe(`terminal refused: The user rejected running this command, so it was not run: touch ${marker}`)
    expect(existsSync(marker)).toBe(false)
    const thread = fold((await host.request('sessions.open', { id: sessionId })).records)
    expect(thread.entries.filter((e) => e.kind === 'permission')).toMatchObject([
      { title: `Run the command touch ${marker}`, answer: 'Reject', allowed: false }
    ])
  })

  it('runs once allowed when asked', async () => {
    const marker = join(projectDir, 'ran.txt')
    const turn = start(`/terminal touch ${marker} && echo made`)
    const question = await waitForQuestion()
    expect(existsSync(marker)).toBe(false)
    await host.request('sessions.respondPermission', { id: sessionId, requestId: question.requestId, optionId: 'allow' })
    expect(await turn.done).toBe('exit=0 signal=none truncated=false output="made\\n"')
    expect(existsSync(marker)).toBe(true)
  })

  it('runs without a second question when the user allowed that command in the permission request the agent made for it; the answer is used once', async () => {
    const marker = join(projectDir, 'ran.txt')
    const again = join(projectDir, 'again.txt')
    // The agent asks for `touch marker`, then runs it; then runs a command of its own that no request named.
    const turn = start(`/run touch ${marker}\n/terminal touch ${again}`)
    const asked = await waitForQuestion()
    expect(asked.title).toBe(`Run touch ${marker}`)
    await host.request('sessions.respondPermission', { id: sessionId, requestId: asked.requestId, optionId: 'allow' })
    // The second command is asked on its own; the first has run by then, without a question of its own.
    const second = await waitUntil('the second question', async () => (await pending()).find((p) => p.requestId !== asked.requestId))
    expect(second.title).toBe(`Run the command touch ${again}`)
    expect(existsSync(marker)).toBe(true)
    await waitUntil('the windows told of the second question', () => shown.has(second.requestId))
    expect([...shown.values()].map((p) => p.title)).toEqual([`Run touch ${marker}`, `Run the command touch ${again}`])
    await host.request('sessions.respondPermission', { id: sessionId, requestId: second.requestId, optionId: 'reject' })
    await turn.done
    expect(existsSync(again)).toBe(false)
  })

  it('sent while the permission request for it is still unanswered, waits for that answer: one question, then it runs or is refused', async () => {
    for (const [optionId, runs] of [
      ['allow', true],
      ['reject', false]
    ] as const) {
      const marker = join(projectDir, `raced-${optionId}.txt`)
      const turn = start(`/run-racing touch ${marker}`)
      const asked = await waitForQuestion()
      expect(asked.title).toBe(`Run touch ${marker}`)
      expect(existsSync(marker)).toBe(false)
      await host.request('sessions.respondPermission', { id: sessionId, requestId: asked.requestId, optionId })
      const said = await turn.done
      expect(said).toMatch(runs ? /^exit=0 / : /^terminal refused: The user rejected running this command/)
      expect(said.endsWith(` permission: ${optionId}`)).toBe(true)
      expect(existsSync(marker)).toBe(runs)
      await waitUntil('the windows told', () => shown.has(asked.requestId))
    }
    expect([...shown.values()].map((p) => p.title)).toEqual([
      `Run touch ${join(projectDir, 'raced-allow.txt')}`,
      `Run touch ${join(projectDir, 'raced-reject.txt')}`
    ])
  })

  it('is answered by an "always" rule for exactly that command, without a question; another command is asked', async () => {
    const marker = join(projectDir, 'ran.txt')
    const first = start(`/terminal touch ${marker}`)
    const card = await waitForQuestion()
    // Counted below: every question shown so far has reached the windows. Waited for before it is answered: the
    // windows are told in batches, and a question answered within one batch is never in the state they are sent.
    await waitUntil('the windows told of the first question', () => shown.has(card.requestId))
    await host.request('sessions.respondPermission', { id: sessionId, requestId: card.requestId, optionId: 'allow-always' })
    await first.done
    expect(existsSync(marker)).toBe(true)
    const rules = await host.request('permissions.list', {})
    expect(rules).toMatchObject([{ decision: 'allow', toolKind: 'execute', scope: { kind: 'command', command: `touch ${marker}` } }])
    await rm(marker)
    const asked = shown.size
    expect(await start(`/terminal touch ${marker}`).done).toMatch(/^exit=0 /)
    expect(existsSync(marker)).toBe(true)
    expect(shown.size).toBe(asked)
    // Another command (even one containing the first) is asked.
    const other = start(`/terminal touch ${marker}; touch ${marker}.2`)
    const question = await waitForQuestion()
    expect(question.title).toBe(`Run the command touch ${marker}; touch ${marker}.2`)
    await host.request('sessions.respondPermission', { id: sessionId, requestId: question.requestId, optionId: 'reject' })
    await other.done
    expect(existsSync(`${marker}.2`)).toBe(false)
  })
})

describe('an agent that runs a command the user rejected', () => {
  it('is refused at once, without a second question', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state-2'), { SCRIPTED_AGENT_RUN_ANYWAY: '1' }, 'Stubborn'))
    const project = (await host.request('projects.list', {}))[0]
    const id = (await host.request('sessions.new', { projectId: project.id, agentId: agent.id })).id
    const marker = join(projectDir, 'ran.txt')
    const turn = host.request('sessions.prompt', { id, text: `/run touch ${marker}` })
    const asked = await waitUntil('the question', async () => (await host.request('sessions.open', { id })).state.permissions?.[0])
    await host.request('sessions.respondPermission', { id, requestId: asked.requestId, optionId: 'reject' })
    await turn
    const thread = fold((await host.request('sessions.open', { id })).records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe(
      `permission: rejectterminal refused: The user rejected running this command, so it was not run: touch ${marker}`
    )
    expect(thread.entries.filter((e) => e.kind === 'permission')).toHaveLength(1)
    expect(existsSync(marker)).toBe(false)
  })
})
