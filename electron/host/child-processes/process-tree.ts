import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'

/**
 * Killing a child with everything it started. Children we spawn lead their
 * own process group on POSIX (spawned `detached`), and carry a mark in their
 * environment that their descendants inherit. A kill takes down:
 *
 * - the whole process group (the ordinary case: grandchildren stay in it);
 * - every descendant found through parent pids (one that moved to a group or
 *   session of its own with setsid, while its parent lives);
 * - on Linux, every process still carrying the mark (one whose parent is
 *   already gone, reparented to init), found in /proc.
 *
 * Rounds repeat until nothing is left, so processes forked during a kill are
 * caught too. Windows has no groups: `taskkill /T /F` walks the tree.
 *
 * Not caught: a process that both left its parent's tree and cleared its
 * environment (a deliberate daemon), and, on macOS, an orphan that left the
 * group; see test/faults/README.md (the failure model).
 */

/** The environment variable that marks our children and their descendants. */
export const PROCESS_MARK_ENV = 'SWITCHBOARD_PROCESS_MARK'

/**
 * What the marks of one host's children start with: the data folder (hashed)
 * and the host's pid. After a crash, the next host on the same folder finds
 * what the dead one left running by it (`killLeftovers`).
 */
export function markPrefixFor(dataDir: string, pid = process.pid): string {
  return `sb.${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}.${pid}.`
}

/** A fresh mark for one child (random after the prefix: no other process carries it by chance). */
export function newProcessMark(prefix = 'sb.'): string {
  return `${prefix}${randomBytes(12).toString('hex')}`
}

/**
 * Linux: kills the processes that hosts of this data folder, other than this
 * one, started and left running (the app was killed or crashed, so nobody
 * stopped them). Returns how many there were. Elsewhere it finds nothing.
 */
export function killLeftovers(dataDir: string): number {
  if (process.platform !== 'linux') return 0
  const folder = markPrefixFor(dataDir, 0).replace(/0\.$/, '')
  const mine = markPrefixFor(dataDir)
  const needle = Buffer.from(`${PROCESS_MARK_ENV}=${folder}`)
  let killed = 0
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let found = 0
    for (const name of safeReaddir('/proc')) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
      let environ: Buffer
      try {
        environ = readFileSync(`/proc/${name}/environ`)
      } catch {
        continue
      }
      const at = environ.indexOf(needle)
      if (at === -1) continue
      const end = environ.indexOf(0, at)
      const mark = environ.subarray(at + PROCESS_MARK_ENV.length + 1, end === -1 ? undefined : end).toString()
      if (mark.startsWith(mine)) continue // ours, alive and well
      if (trySignal(Number(name), 'SIGKILL')) found++
    }
    killed += found
    if (found === 0) break
  }
  return killed
}

export interface KillTarget {
  pid: number | undefined
  /** The child's mark (PROCESS_MARK_ENV), when it was spawned with one. */
  mark?: string
  /** True once the child has exited and been reaped (its pid alone no longer names it). */
  reaped?: boolean
  /** Processes found in an earlier round of the same kill (say, before a grace period), signalled again. */
  also?: number[]
}

const MAX_ROUNDS = 8

/**
 * Kills the child's group, its descendants and its marked processes. Returns
 * the pids signalled (pass them as `also` to a later SIGKILL, so what ignored
 * a SIGTERM and was orphaned meanwhile is not missed).
 */
export function killProcessTree(target: ChildProcess | KillTarget, signal: NodeJS.Signals = 'SIGKILL'): number[] {
  const pid = target.pid
  if (pid === undefined) return []
  const isChild = 'exitCode' in target
  const mark = isChild ? undefined : target.mark
  const reaped = isChild ? target.exitCode !== null || target.signalCode !== null : (target.reaped ?? false)
  if (process.platform === 'win32') {
    if (reaped) return [] // the tree is no longer reachable through its pid
    spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { windowsHide: true }).on('error', () => undefined)
    return [pid]
  }
  const seen = new Set<number>()
  for (const p of isChild ? [] : (target.also ?? [])) if (trySignal(p, signal)) seen.add(p)
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const targets = treeOf(pid, mark, reaped).filter((p) => p !== process.pid)
    const fresh = targets.filter((p) => !seen.has(p))
    trySignal(-pid, signal) // the group, even when its leader is gone
    for (const p of targets) if (trySignal(p, signal)) seen.add(p)
    // SIGTERM asks; only SIGKILL is sure to end them, so only then look again for what survived or was forked meanwhile.
    if (signal !== 'SIGKILL' || fresh.length === 0) break
  }
  return [...seen]
}

function trySignal(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal)
    return true
  } catch {
    return false // already gone
  }
}

interface ProcessInfo {
  pid: number
  ppid: number
  pgid: number
}

/**
 * The group's members, the processes carrying the mark (Linux), and
 * everything under them by parent pid; the pid itself and its descendants
 * only while it is not reaped (after that its pid may belong to a stranger).
 */
function treeOf(pid: number, mark: string | undefined, reaped: boolean): number[] {
  const table = listProcesses()
  const children = new Map<number, number[]>()
  const roots: number[] = reaped ? [] : [pid]
  for (const p of table) {
    if (p.pgid === pid) roots.push(p.pid)
    const list = children.get(p.ppid)
    if (list) list.push(p.pid)
    else children.set(p.ppid, [p.pid])
  }
  if (mark && process.platform === 'linux') roots.push(...markedProcesses(mark))
  const found = new Set<number>()
  const queue = roots
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    if (found.has(next)) continue
    found.add(next)
    for (const child of children.get(next) ?? []) queue.push(child)
  }
  return [...found]
}

/** Every process with its parent and group: /proc on Linux, `ps` elsewhere. */
export function listProcesses(): ProcessInfo[] {
  if (process.platform === 'linux') {
    const list: ProcessInfo[] = []
    for (const name of safeReaddir('/proc')) {
      if (!/^\d+$/.test(name)) continue
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
        // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        if (fields[0] === 'Z') continue // a zombie is already dead
        list.push({ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]) })
      } catch {
        // gone meanwhile
      }
    }
    return list
  }
  try {
    const out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid='], { encoding: 'utf8', timeout: 5000 })
    return out
      .split('\n')
      .map((line) => line.trim().split(/\s+/).map(Number))
      .filter((f) => f.length === 3 && f.every(Number.isInteger))
      .map(([pid, ppid, pgid]) => ({ pid, ppid, pgid }))
  } catch {
    return []
  }
}

/** Linux: processes of this user whose environment carries the mark. */
function markedProcesses(mark: string): number[] {
  const needle = Buffer.from(`${PROCESS_MARK_ENV}=${mark}\0`)
  const found: number[] = []
  for (const name of safeReaddir('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(needle)) found.push(Number(name))
    } catch {
      // another user's process, or gone
    }
  }
  return found
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
