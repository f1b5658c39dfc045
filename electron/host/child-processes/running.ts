import { readFileSync } from 'node:fs'

/**
 * Whether process `pid` still runs: it exists (or is another user's, EPERM)
 * and, on Linux, is not a zombie. A process killed whose parent has not
 * reaped it yet (a Host killed with its supervisor waits for the system's
 * first process, which in a container may reap late or never) still answers
 * `kill(pid, 0)`, yet holds nothing any more: a lock or a door it left is
 * stale.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  if (process.platform !== 'linux') return true
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // "pid (command) state …": the command may itself hold ") ", so the state is read after the last one.
    const state = stat.charAt(stat.lastIndexOf(')') + 2)
    return state !== 'Z' && state !== 'X'
  } catch {
    return true
  }
}

/**
 * Resolves once none of `pids` runs (see `isRunning`), or after `maxMs`: a process sent SIGKILL is gone only once the
 * kernel has run it again, which on a loaded machine can come after the sender has moved on.
 */
export async function untilGone(pids: readonly number[], maxMs = 2_000): Promise<void> {
  const deadline = Date.now() + maxMs
  let left = pids.filter(isRunning)
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    left = left.filter(isRunning)
  }
}
