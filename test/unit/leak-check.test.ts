import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { processesWithEnv, TEST_RUN_ENV } from '../leak-check'

/** The suite's own leak check (test/leak-check.ts) finds processes by a variable in their environment. */

describe.skipIf(process.platform !== 'linux')('the leak check', () => {
  it('finds a process by a variable in its environment, with its command line, and not once it is gone', async () => {
    const mark = randomUUID()
    const child = spawn('sleep', ['60'], { env: { ...process.env, LEAK_CHECK_TEST: mark }, stdio: 'ignore' })
    await new Promise((resolve) => child.once('spawn', resolve))
    await expect.poll(() => processesWithEnv('LEAK_CHECK_TEST', mark)).toEqual([{ pid: child.pid, commandLine: 'sleep 60' }])
    // Only the exact value: a mark that merely starts the same is another run's.
    expect(processesWithEnv('LEAK_CHECK_TEST', mark.slice(0, -1))).toEqual([])
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    expect(processesWithEnv('LEAK_CHECK_TEST', mark)).toEqual([])
  })

  it('marks this run: every test worker carries the run’s mark, and what it starts inherits it', () => {
    expect(process.env[TEST_RUN_ENV]).toMatch(/^\d+\.[0-9a-f-]{36}$/)
  })
})
