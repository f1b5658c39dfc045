import { spawn, type ChildProcess } from 'node:child_process'

/**
 * Kills a child and everything it started. Children we spawn lead their own
 * process group on POSIX (spawned `detached`), so the group goes at once;
 * Windows has no groups, so taskkill walks the tree.
 */
export function killProcessTree(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return
  try {
    if (process.platform === 'win32') {
      spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { windowsHide: true }).on('error', () => undefined)
    } else {
      process.kill(-child.pid, signal)
    }
  } catch {
    // Already gone.
  }
}
