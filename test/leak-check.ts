import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'

/**
 * The suite checks itself for leaked processes (vitest `globalSetup`). Before
 * any test runs, this run gets a mark in the environment (`SWITCHBOARD_TEST_RUN`)
 * that the test workers inherit, and so does everything they start, directly or
 * through the Host (agents, MCP servers, terminals, sign-in programs, login
 * shells, serve, Chromium): the Host builds every child's environment from its
 * own (see electron/host/child-processes/environment.ts). After the last test, any process
 * still carrying the mark outlived the test that started it: the teardown
 * waits a moment for processes on their way out, then fails naming each
 * leaked process by its command line, and kills them so the machine stays
 * clean. Linux only (it reads /proc); elsewhere it checks nothing.
 */

export const TEST_RUN_ENV = 'SWITCHBOARD_TEST_RUN'

/** How long processes being stopped at the end of the last tests get to go before they count as leaked. */
const GRACE_MS = 5000

export interface MarkedProcess {
  pid: number
  commandLine: string
}

/** The live processes (zombies excepted) whose environment carries `NAME=value` exactly. */
export function processesWithEnv(name: string, value: string): MarkedProcess[] {
  if (process.platform !== 'linux') return []
  const needle = Buffer.from(`${name}=${value}\0`)
  const found: MarkedProcess[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const environ = readFileSync(`/proc/${entry}/environ`)
      // The variable may be the first one (no NUL before it) or any later one.
      if (!environ.subarray(0, needle.length).equals(needle) && !environ.includes(Buffer.concat([Buffer.from('\0'), needle]))) continue
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ')
      found.push({ pid: Number(entry), commandLine })
    } catch {
      // gone meanwhile, or another user's
    }
  }
  return found
}

export default function setup(): () => Promise<void> {
  const run = `${process.pid}.${randomUUID()}`
  process.env[TEST_RUN_ENV] = run
  return async () => {
    let leaked = processesWithEnv(TEST_RUN_ENV, run)
    const deadline = Date.now() + GRACE_MS
    while (leaked.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      leaked = processesWithEnv(TEST_RUN_ENV, run)
    }
    if (leaked.length === 0) return
    for (const { pid } of leaked) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone by itself
      }
    }
    // Vitest reports an error thrown here but would still exit 0.
    process.exitCode = 1
    const list = leaked.map((p) => `  ${p.pid}: ${p.commandLine.length > 300 ? `${p.commandLine.slice(0, 297)}…` : p.commandLine}`).join('\n')
    throw new Error(
      `${leaked.length} process${leaked.length === 1 ? '' : 'es'} started by the tests ${leaked.length === 1 ? 'was' : 'were'} still running after the last test (now killed):\n${list}`
    )
  }
}
