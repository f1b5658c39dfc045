import { mkdir, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { transcriptLines } from '../electron/host/storage/transcript-stream'
import { scriptedTransport } from '../test/agent/spawn'
import { agentEnv } from './agents'
import { phases, withTempDir, type Figure } from './lib'
import { appendLongTurns } from './long-data'
import { procStatusMb, searchComplete, startServe, type Served } from './processes'

/**
 * The soak (issue 40, goal 1), BENCH_ONLY=soak: the headless Host as shipped
 * (serve.js) with four sessions streaming for BENCH_SOAK_MINUTES (2 by
 * default), and each minute a fork of the longest, a search and a new
 * session: the Host's RSS (peak, and its slope over the soak) and the data
 * folder's growth per streamed chunk. Then a fork of a 100,000-entry
 * conversation against a fork of a 100-entry one: the Host's RSS while it
 * runs (BENCH_SOAK_FORK_ONLY=1: only these).
 *
 * The agent keeps its sessions in a state folder (a fork reads its parent there), each update appended before it is
 * sent. Until issue 40's nineteenth round it rewrote a session's whole history there at every chunk: its cost grew
 * with the session, and held the streams to about a third of the rate asked (15,000–30,000 chunks in two minutes,
 * against 60,000–77,000 since). BENCH_SOAK_AGENT_IN_MEMORY=1: its sessions in memory only.
 */

type Add = (figure: Omit<Figure, 'median' | 'min' | 'max' | 'runs'>, samples: number[]) => Figure

const SESSIONS = 4
/**
 * When each minute's fork, search and new session start, from the minute's start: 20 s in, so that they can end inside
 * the minute. Until issue 40's eighteenth round they started 5 s before the minute's end, and the last minute's ended
 * 7–124 s past the deadline while the streams went on: the soak's length, over which its slope is taken, varied with
 * the load. The first minute's take 1–18 s; the second minute's fork took 35 s at load 6 (it ended at 6,010 records,
 * its parent's second turn whole) and had not ended at the deadline, 40 s on, in two runs at load 12–16 (docs/BENCHMARKS.md, item 11).
 */
const ACTIONS_AT_MS = 20_000
/**
 * Before the soak's clock starts, its warm-up: the four sessions streaming, and a fork, a search and a new session done
 * once, WARM_UP_ACTIONS_AT_MS into it; the clock starts once they have ended and the streams have run WARM_UP_MS. In a
 * soak without it (until issue 40's twenty-second round) the first minute's rise, a step of ~10 MB when its first
 * fork, search and new session ran (their code compiled, the heap taking its working size, the node binary's pages),
 * was most of the slope: a Host that rose once and stayed flat read 8–12 MB a minute. The rise is given beside the
 * slope. BENCH_SOAK_WARM_UP=<seconds>: another length (0: none, the clock starts with the sessions, as before).
 */
const WARM_UP_MS = 25_000
const WARM_UP_ACTIONS_AT_MS = 5_000

/** BENCH_SOAK_WARM_UP in ms: WARM_UP_MS when unset; a number of seconds ≥ 0, or the soak does not start. */
function warmUpFromEnv(): number {
  const given = process.env.BENCH_SOAK_WARM_UP
  if (given === undefined) return WARM_UP_MS
  const seconds = Number(given)
  if (given.trim() === '' || !(seconds >= 0)) throw new Error(`BENCH_SOAK_WARM_UP=${given}: give the warm-up's length in seconds (0: none)`)
  return seconds * 1000
}
/** Chunks a turn streams, and how fast: about 200 a second per session, an agent in full flow. */
const CHUNKS_PER_TURN = 3_000
const STREAM_ENV = { SCRIPTED_AGENT_SESSIONS: 'fork', SCRIPTED_AGENT_CHUNK_DELAY_MS: '5', SCRIPTED_AGENT_CHUNKS_PER_DELAY: '1' }
/** A chunk as the agent sends it (a session/update line), what the data folder's growth per chunk is held to. */
const CHUNK_WIRE_BYTES = Buffer.byteLength(
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'session/update',
    params: {
      sessionId: 'sess-00000000-0000-0000-0000-000000000000',
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'chunk 1234 ' } }
    }
  }) + '\n'
)

export async function soakFigures(add: Add, quick: boolean): Promise<void> {
  // BENCH_SOAK_FORK_ONLY=1: the fork figures alone (the soak itself takes minutes).
  if (!process.env.BENCH_SOAK_FORK_ONLY) await soakItself(add, quick)
  await forkFigures(add, quick)
}

async function soakItself(add: Add, quick: boolean): Promise<void> {
  const minutes = Number(process.env.BENCH_SOAK_MINUTES) || (quick ? 1 : 2)
  const phase = phases('soak')
  const soak = await withTempDir('soak', (root) => runSoak(root, minutes, phase))
  phase('its folder removed')
  const idle = add({ group: '5', name: 'soak: Host RSS before the sessions start (baseline)', unit: 'MB' }, [soak.idleMb])
  idle.ratio = 1
  idle.baseline = 'idle Host'
  const peak = add(
    {
      group: '5',
      name: `soak: Host RSS peak, ${SESSIONS} sessions streaming ${minutes} min, a fork, a search, a new session each minute`,
      unit: 'MB'
    },
    [soak.peakMb]
  )
  peak.ratio = peak.median / idle.median
  peak.baseline = 'idle Host'
  peak.note =
    `${soak.chunks.toLocaleString('en-US')} chunks, ${soak.forks} forks (the last of ${soak.lastForkRecords.toLocaleString('en-US')} records)` +
    `; each minute's fork, search and new session took ${soak.actionsMs.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s` +
    (soak.lateMs > 0 ? `; the last minute's actions ended ${(soak.lateMs / 1000).toFixed(0)} s past the end, not sampled` : '') +
    (soak.unfinished ? `; ${soak.unfinished}` : '')
  const slope = add({ group: '5', name: 'soak: Host RSS slope over the soak', unit: 'MB/min' }, [soak.slopeMbPerMin])
  slope.ratio = slope.median / idle.median
  slope.baseline = 'idle Host (share of it per minute)'
  slope.goal = 'flat: ≤ 5 % of the idle Host a minute'
  slope.met = slope.ratio <= 0.05
  // The warm-up's rise (before the clock) and the slope after the first minute, beside the figure (docs/BENCHMARKS.md, item 11).
  slope.note =
    (soak.warmUpMs > 0
      ? `from a warm Host: its warm-up (${(soak.warmUpMs / 1000).toFixed(0)} s, the streams, a fork, a search and a new session) rose ${soak.warmUpRiseMb.toFixed(1)} MB over the idle Host; `
      : 'from a cold Host (no warm-up); ') +
    (minutes >= 2
      ? `after its first minute ${soak.slopeAfterFirstMinute.toFixed(2)} MB a minute; the first minute's rise ${soak.firstMinuteRiseMb.toFixed(1)} MB`
      : `the first minute's rise ${soak.firstMinuteRiseMb.toFixed(1)} MB`)
  const search = add({ group: '2', name: 'soak: search, request to answer, last minute', unit: 'ms' }, [soak.searchMs.at(-1)!])
  search.ratio = search.median / soak.searchMs[0]
  search.baseline = 'first minute'
  const growth = add({ group: '5', name: 'soak: data folder growth per streamed chunk', unit: 'bytes' }, [soak.growthBytes / soak.chunks])
  growth.ratio = growth.median / CHUNK_WIRE_BYTES
  growth.baseline = `the chunk on the wire (${CHUNK_WIRE_BYTES} bytes)`
  growth.note = 'forks copy their parent: their copies count'
}

async function forkFigures(add: Add, quick: boolean): Promise<void> {
  const phase = phases('soak')
  const forks = await withTempDir('soak-fork', (root) => forkMemory(root, quick ? [100, 10_000] : [100, 100_000], phase))
  phase('fork: its folder removed')
  const small = add({ group: '5', name: 'fork: Host RSS rise while forking, 100 entries (baseline)', unit: 'MB', size: 100 }, forks[0].riseMb)
  small.ratio = 1
  small.baseline = '100 entries'
  const big = forks[1]
  const large = add({ group: '5', name: 'fork: Host RSS rise while forking', unit: 'MB', size: big.entries }, big.riseMb)
  // As seed-memory's: against the same idle Host, whose index holds the long conversation (goal 2's memory, not this).
  large.ratio = (big.idleMb + large.median) / (big.idleMb + small.median)
  large.baseline = 'the rise with 100 entries, on the same idle Host (peak to peak)'
  large.goal = 'flat in the conversation’s size: peak ≤ 1.3 × the 100-entry fork'
  large.met = large.ratio <= 1.3
  large.note = `idle ${big.idleMb.toFixed(0)} MB, peak ${(big.idleMb + large.median).toFixed(0)} MB, transcript ${big.fileMb.toFixed(0)} MB`
}

/** The Host's RSS (the process serve.js forked, not serve's supervisor), in MB. */
const rssMb = (pid: number): number => procStatusMb(pid, 'VmRSS')

/** Samples the Host's RSS every 100 ms until stopped (`at`: minutes since `started`). */
function sampler(pid: number): { samples: { at: number; mb: number }[]; started: number; stop(): void } {
  const samples: { at: number; mb: number }[] = []
  const started = Date.now()
  const timer = setInterval(() => {
    try {
      samples.push({ at: (Date.now() - started) / 60_000, mb: rssMb(pid) })
    } catch {
      // The Host is gone: the soak will say why.
    }
  }, 100)
  return { samples, started, stop: () => clearInterval(timer) }
}

/** Least-squares slope of RSS over time (MB a minute). */
function slopeOf(samples: { at: number; mb: number }[]): number {
  const n = samples.length
  const mx = samples.reduce((a, s) => a + s.at, 0) / n
  const my = samples.reduce((a, s) => a + s.mb, 0) / n
  const sxy = samples.reduce((a, s) => a + (s.at - mx) * (s.mb - my), 0)
  const sxx = samples.reduce((a, s) => a + (s.at - mx) ** 2, 0)
  return sxx === 0 ? 0 : sxy / sxx
}

/** The agent message chunks a transcript holds (a line each), read as the Host reads it (transcriptLines). */
async function chunksIn(file: string): Promise<number> {
  let chunks = 0
  for await (const { line } of transcriptLines(file)) if (line.includes('"agent_message_chunk"')) chunks++
  return chunks
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    // A file being replaced (db.json's temporary copy, renamed over it) may be gone by the time it is read.
    total += entry.isDirectory()
      ? await folderBytes(path)
      : await stat(path).then(
          (s) => s.size,
          () => 0
        )
  }
  return total
}

export interface Soak {
  idleMb: number
  peakMb: number
  slopeMbPerMin: number
  /** The slope from the soak's second minute to its end, and the first minute's rise (its last sample over the idle Host). */
  slopeAfterFirstMinute: number
  /** Its first minute's rise: its last sample over the Host at the clock's start (the idle Host, with no warm-up). */
  firstMinuteRiseMb: number
  /** How long the warm-up before the clock ran (0: none), and the Host's rise over it (at the clock's start, over the idle Host). */
  warmUpMs: number
  warmUpRiseMb: number
  chunks: number
  forks: number
  lastForkRecords: number
  searchMs: number[]
  /** Each minute's fork, search and new session, start to end (those that ended). */
  actionsMs: number[]
  growthBytes: number
  /** How long after the deadline the last minute's actions ended (0: before it); what ran after is not in the figure. */
  lateMs: number
  /** Why a minute's actions did not end ('' when they all did). */
  unfinished: string
  /** Every RSS sample (`at`: minutes from the warm-up's start, the sessions' start), and the clock's start there: for probes. */
  samples: { at: number; mb: number }[]
  clockAt: number
}

export async function runSoak(root: string, minutes: number, phase: (what: string) => void, warmUpFor = warmUpFromEnv()): Promise<Soak> {
  const warmUp = warmUpFor > 0
  const dataDir = join(root, 'data')
  const project = join(root, 'project')
  await mkdir(project, { recursive: true })
  const host = await startServe(dataDir)
  try {
    const { client } = host
    const projectId = (await host.confirmed<{ id: string }>('projects.add', { cwd: project })).id
    const agentId = (
      await host.confirmed<{ id: string }>('agents.add', {
        name: 'Scripted',
        transport: scriptedTransport(agentEnv(process.env.BENCH_SOAK_AGENT_IN_MEMORY ? null : join(root, 'agent-state'), STREAM_ENV))
      })
    ).id
    await new Promise((r) => setTimeout(r, 500))
    phase('the Host started')
    const idleMb = rssMb(host.host)
    const sizeBefore = await folderBytes(dataDir)
    // The soak is its minutes, from the warm-up's end (else from the sessions' start): the clock (the RSS samples) and
    // the streams stop at the deadline, set once the clock starts.
    const warmUpStarted = Date.now()
    // One sampler from here: the warm-up's samples count in the peak, the slope is taken from the clock's start.
    const rss = sampler(host.host)
    let deadline = Infinity
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => host.confirmed<{ id: string }>('sessions.new', { projectId, agentId })))
    let turns = 0
    let stoppedAgents = 0
    const streaming = sessions.map(async (session) => {
      while (Date.now() < deadline) {
        try {
          await host.confirmed('sessions.prompt', { id: session.id, text: `/stream ${CHUNKS_PER_TURN}` })
        } catch (error) {
          // Asked to stop at the deadline, an agent that has not ended its turn 15 s later is stopped by the Host (seen
          // at load 13): the turn is over all the same.
          if (Date.now() < deadline) throw error
          stoppedAgents++
        }
        turns++
      }
    })
    let forks = 0
    let lastForkRecords = 0
    const searchMs: number[] = []
    const actionsMs: number[] = []
    /** A fork of the first session, a search and a new session with one prompt: the fork's records, the search's time. */
    const act = async (): Promise<{ records: number; searchMs: number }> => {
      const fork = await host.confirmed<{ id: string }>('sessions.fork', { id: sessions[0].id })
      const records = (await client.request<{ nextSeq: number }>('sessions.open', { id: fork.id, tail: 1 })).nextSeq
      const t0 = performance.now()
      await client.request('search.query', { q: 'chunk 1234', limit: 30 })
      const ms = performance.now() - t0
      const fresh = await host.confirmed<{ id: string }>('sessions.new', { projectId, agentId })
      await host.confirmed('sessions.prompt', { id: fresh.id, text: 'hello' })
      return { records, searchMs: ms }
    }
    let warmUpMs = 0
    if (warmUp) {
      await new Promise((r) => setTimeout(r, WARM_UP_ACTIONS_AT_MS))
      const { records, searchMs: ms } = await act()
      phase(`warm-up: a fork of ${records.toLocaleString('en-US')} records, a search (${ms.toFixed(0)} ms) and a new session`)
      await new Promise((r) => setTimeout(r, Math.max(0, warmUpStarted + warmUpFor - Date.now())))
      warmUpMs = Date.now() - warmUpStarted
    }
    const clockMb = rssMb(host.host)
    const warmUpRiseMb = clockMb - idleMb
    const clockStarted = Date.now()
    deadline = clockStarted + minutes * 60_000
    if (warmUp) phase(`warm-up over (${(warmUpMs / 1000).toFixed(1)} s, +${warmUpRiseMb.toFixed(1)} MB): the clock starts`)
    let actionsEnded = 0
    let unfinished = ''
    const actions = (async () => {
      for (let minute = 0; minute < minutes; minute++) {
        await new Promise((r) => setTimeout(r, Math.max(0, clockStarted + minute * 60_000 + ACTIONS_AT_MS - Date.now())))
        // A minute whose actions cannot start before the deadline (the last minute's ran that long) has none.
        if (Date.now() >= deadline) break
        const started = performance.now()
        try {
          const done = await act()
          forks++
          lastForkRecords = done.records
          searchMs.push(done.searchMs)
          actionsMs.push(performance.now() - started)
          phase(
            `minute ${minute + 1}: a fork of ${done.records.toLocaleString('en-US')} records, a search (${done.searchMs.toFixed(0)} ms) and a new session`
          )
        } catch (error) {
          // Still under way at the deadline, and its agent stopped there by the Host (it did not end the streams' turns
          // 15 s after they were cancelled: seen at load 12–16, a fork waiting on that agent): said in the figure's note.
          if (Date.now() < deadline) throw error
          unfinished = `minute ${minute + 1}'s actions did not end (${(error as Error).message})`
          phase(unfinished)
        }
      }
      actionsEnded = Date.now()
    })()
    // Its failure is said where it is awaited, at the deadline.
    actions.catch(() => undefined)
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())))
    rss.stop()
    // The soak's own samples, in minutes from the clock's start.
    const clockAt = (clockStarted - rss.started) / 60_000
    const soakSamples = rss.samples.filter((s) => s.at >= clockAt).map((s) => ({ at: s.at - clockAt, mb: s.mb }))
    phase(`${minutes} min from the clock's start (${soakSamples.length} samples)`)
    // A minute's actions still under way at the deadline end outside the figure, the streams going on meanwhile (their
    // turns stopped first, the agent did not end them within 15 s at load 12–16 and the Host stopped it, the fork
    // waiting on it failing: issue 40's eighteenth round).
    await actions
    const lateMs = Math.max(0, actionsEnded - deadline)
    if (lateMs > 0) phase(`the last minute's actions ended ${(lateMs / 1000).toFixed(1)} s past the deadline`)
    // Then the turns under way are stopped, as the Stop button does, rather than left to end (at a third of the rate
    // asked, a turn of 3,000 chunks takes ~45 s: most of a minute more of four streams, no fork, no search).
    // Asked again while any runs on: a turn its loop began just before the deadline may not have started when asked.
    let ended = false
    const allEnded = Promise.all(streaming).then(() => (ended = true))
    while (!ended) {
      await Promise.all(sessions.map((session) => client.request('sessions.cancel', { id: session.id })))
      await Promise.race([allEnded, new Promise((r) => setTimeout(r, 2_000))])
    }
    phase(`the turns under way at the end stopped (${turns} turns in all${stoppedAgents ? `; ${stoppedAgents} agents stopped by the Host` : ''})`)
    // The chunks are those the four sessions' transcripts hold.
    const growthBytes = (await folderBytes(dataDir)) - sizeBefore
    let chunks = 0
    for (const session of sessions) chunks += await chunksIn(join(dataDir, 'transcripts', `${session.id}.jsonl`))
    return {
      idleMb,
      peakMb: Math.max(...rss.samples.map((s) => s.mb)),
      slopeMbPerMin: slopeOf(soakSamples),
      slopeAfterFirstMinute: slopeOf(soakSamples.filter((s) => s.at >= 1)),
      firstMinuteRiseMb: (soakSamples.filter((s) => s.at < 1).at(-1)?.mb ?? clockMb) - clockMb,
      warmUpMs,
      warmUpRiseMb,
      chunks,
      forks,
      lastForkRecords,
      searchMs,
      actionsMs,
      growthBytes,
      lateMs,
      unfinished,
      samples: rss.samples,
      clockAt
    }
  } finally {
    await host.close()
    phase('the Host closed')
  }
}

interface ForkMemory {
  entries: number
  idleMb: number
  riseMb: number[]
  fileMb: number
}

/**
 * A data folder (`dataDir`) with one conversation of the scripted agent (which can fork) made `entries` long: a session
 * made by the agent (a turn, 'the first question'), its transcript then made long while no Host runs.
 */
export async function longForkParent(root: string, dataDir: string, entries: number): Promise<{ parentId: string; file: string }> {
  const project = join(root, 'project')
  await mkdir(project, { recursive: true })
  const host: Served = await startServe(dataDir)
  let parentId: string
  try {
    const projectId = (await host.confirmed<{ id: string }>('projects.add', { cwd: project })).id
    const agentId = (
      await host.confirmed<{ id: string }>('agents.add', {
        name: 'Scripted',
        transport: scriptedTransport(agentEnv(join(root, `agent-state-${entries}`), { SCRIPTED_AGENT_SESSIONS: 'fork' }))
      })
    ).id
    parentId = (await host.confirmed<{ id: string }>('sessions.new', { projectId, agentId })).id
    await host.confirmed('sessions.prompt', { id: parentId, text: 'the first question' })
  } finally {
    await host.close()
  }
  const file = join(dataDir, 'transcripts', `${parentId}.jsonl`)
  await appendLongTurns(file, entries)
  return { parentId, file }
}

/** The Host's RSS rise while it forks a conversation of each size (`longForkParent`). */
export async function forkMemory(root: string, sizes: number[], phase: (what: string) => void = () => undefined): Promise<ForkMemory[]> {
  const results: ForkMemory[] = []
  for (const entries of sizes) {
    const dataDir = join(root, `data-${entries}`)
    const { parentId, file } = await longForkParent(root, dataDir, entries)
    phase(`fork ${entries}: its parent made`)
    const parent = { id: parentId }
    const fileMb = (await stat(file)).size / 1024 / 1024
    const riseMb: number[] = []
    for (let run = 0; run < 2; run++) {
      const host = await startServe(dataDir)
      try {
        // Once the search index has read the conversation in (its memory is goal 2's, the index's per session): forked
        // right after the start, the index's read of the parent ran beside the copy. Read 1 s after, not once quiet as
        // seed-memory reads it (untilQuiet): this first Host of the parent saves its index a few seconds after the read
        // (idle 357 MB at 5 s against 222 MB at 1 s; docs/BENCHMARKS.md, item 5).
        await searchComplete(host)
        phase(`fork ${entries}, run ${run}: started, its search index complete`)
        await new Promise((r) => setTimeout(r, 1_000))
        const idle = rssMb(host.host)
        const rss = sampler(host.host)
        await host.confirmed('sessions.fork', { id: parent.id })
        rss.stop()
        phase(`fork ${entries}, run ${run}: forked`)
        riseMb.push(Math.max(idle, ...rss.samples.map((s) => s.mb)) - idle)
        if (run === 0) results.push({ entries, idleMb: idle, riseMb, fileMb })
      } finally {
        // The last run's Host is killed: its folder is removed next, and its close read the forked sessions again.
        await (run === 1 ? host.kill() : host.close())
        phase(`fork ${entries}, run ${run}: ${run === 1 ? 'killed' : 'closed'}`)
      }
    }
  }
  return results
}
