import { readdirSync, readFileSync } from 'node:fs'

/**
 * The CPU time each process of a run used (`/proc/<pid>/stat`, utime +
 * stime), for this process and everything it started: the agents, Chromium's
 * processes by type. Sampled every 250 ms while the run goes, so a process
 * that ends before the run does (a page's renderer when its context closes)
 * still counts up to its last sample. What a figure needs of the machine's
 * two cores, whatever else runs on them: on a loaded machine a rate says
 * little, the CPU time per process says where the work is.
 */

export interface CpuUse {
  /** Wall seconds of the run. */
  wall: number
  /** CPU seconds by kind of process ("this process", "agent", "Chromium renderer", ...). */
  seconds: Record<string, number>
}

const TICKS_PER_SECOND = 100

function kindOf(pid: number, cmdline: string): string {
  if (pid === process.pid) return 'this process (bench, Host)'
  if (cmdline.includes('scripted-agent')) return 'agent'
  const type = /--type=([a-z-]+)/.exec(cmdline)?.[1]
  if (cmdline.includes('chrom'))
    return type === 'renderer' ? 'Chromium renderer' : type === 'gpu-process' ? 'Chromium GPU' : type ? `Chromium ${type}` : 'Chromium browser'
  return `other (${cmdline.split('\0')[0].split('/').pop() || 'ended'})`
}

/** This process and its descendants: CPU ticks and kind by pid. */
function sample(): Map<number, { kind: string; ticks: number }> {
  const all = new Map<number, { ppid: number; ticks: number }>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      all.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
    } catch {
      // gone meanwhile
    }
  }
  const ours = new Set([process.pid])
  for (let grew = true; grew;) {
    grew = false
    for (const [pid, p] of all) {
      if (!ours.has(pid) && ours.has(p.ppid)) {
        ours.add(pid)
        grew = true
      }
    }
  }
  const out = new Map<number, { kind: string; ticks: number }>()
  for (const pid of ours) {
    let cmdline = ''
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    } catch {
      // ended meanwhile
    }
    out.set(pid, { kind: kindOf(pid, cmdline), ticks: all.get(pid)!.ticks })
  }
  return out
}

/** Runs `run`, with the CPU time its processes used meanwhile. */
export async function withCpu<T>(run: () => Promise<T>): Promise<{ result: T; cpu: CpuUse }> {
  const before = sample()
  const last = new Map(before)
  const started = Date.now()
  // A process that ended has no command line left: it keeps the kind it was first seen with.
  const note = (): void => {
    for (const [pid, p] of sample()) last.set(pid, { kind: last.get(pid)?.kind ?? p.kind, ticks: p.ticks })
  }
  const timer = setInterval(note, 250)
  try {
    const result = await run()
    note()
    const seconds: Record<string, number> = {}
    for (const [pid, p] of last) {
      const used = (p.ticks - (before.get(pid)?.ticks ?? 0)) / TICKS_PER_SECOND
      if (used > 0) seconds[p.kind] = (seconds[p.kind] ?? 0) + used
    }
    return { result, cpu: { wall: (Date.now() - started) / 1000, seconds } }
  } finally {
    clearInterval(timer)
  }
}

/** "renderer 4.1 s, this process 3.2 s, … (9.8 s of CPU in 5.1 s: 1.9 cores)", the largest first. */
export function describeCpu(cpu: CpuUse): string {
  const parts = Object.entries(cpu.seconds)
    .filter(([, s]) => s >= 0.05)
    .sort((a, b) => b[1] - a[1])
  const total = parts.reduce((n, [, s]) => n + s, 0)
  return `CPU ${parts.map(([kind, s]) => `${kind} ${s.toFixed(1)} s`).join(', ')} (${total.toFixed(1)} s in ${cpu.wall.toFixed(1)} s: ${(total / Math.max(cpu.wall, 0.001)).toFixed(1)} cores)`
}
