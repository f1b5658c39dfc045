import { existsSync, readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { entriesOf, fold, isProcessRunning, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/** terminal/create|output|wait_for_exit|kill|release, answered by the Host for the agent. */

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
