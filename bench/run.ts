import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { launchBrowser } from '../test/e2e/browser'
import { acpxStream, bareSdkStream, repoRoot } from './agents'
import { framesFloor, framesWhileStreaming, hostStream, openApp, rendererStream } from './app'
import { ENTRIES_PER_TURN, makeDataset } from './data'
import { phases, settleDisk, stats, repeat, table, withTempDir, type Figure } from './lib'
import { checkpointFigures } from './checkpoints'
import { costlyText, type CostlyTextResult } from './costly-text'
import { PATHOLOGICAL } from '../test/agent/pathological'
import { hostMemory, type HostMemory } from './memory'
import { appMemoryFigures, idleFigures } from './idle'
import { initialJavaScript } from './initial-js'
import { hostStart, type HostStart } from './startup'
import { searchFigures } from './search'
import { writeOpenPicture } from './open-picture'
import {
  listing,
  openPastSession,
  reopen,
  warmProfile,
  writeFloorPage,
  writePicturePage,
  type ListingOptions,
  type Reopened,
  type WarmProfile
} from './ui'
import { openSshApp } from './ssh'
import { streamFloor } from './stream-floor'
import { describeCpu, withCpu, type CpuUse } from './proc-cpu'
import { longFigures } from './long'
import { soakFigures } from './soak'
import { seedMemoryFigures } from './seed-memory'
import { startSshd } from '../test/ssh/sshd'
import { listingShape, releaseSeeds, seededDataDir } from './seeds'

/**
 * `npm run bench`: streaming, listing, reopening and memory, each a median of
 * several runs with min and max, timings also as a ratio to a baseline measured
 * in the same run. Writes bench/results.json and prints a markdown table.
 * BENCH_QUICK=1 runs one size and fewer runs (a smoke run).
 */

const quick = process.env.BENCH_QUICK === '1'
/** BENCH_RUNS=n: n runs of each figure (e.g. a quick run's one size, measured more than once). */
const RUNS = Number(process.env.BENCH_RUNS) || (quick ? 1 : 3)
/**
 * The listing's runs: a start takes a quarter of a second, and on two cores one
 * run in three or four is 20–40 % slower than the rest for reasons of its own
 * (the browser's and the Host's work competing): a median of 7 held the ratio
 * to the one-session start where a median of 3 moved by ±0.15, and 11 (each
 * round one start of every size up to 10,000, in turn) hold it better still.
 */
const LISTING_RUNS = Number(process.env.BENCH_RUNS) || (quick ? 1 : 7)
/**
 * The rounds of those in which the one-session start's companions run (the floor, the window's picture, the warm
 * starts: what the start is made of, no goal of theirs): the first 3 of the 7, their ratios to the window's starts of
 * the same rounds. In all 7 until issue 40's twenty-third round: 16 starts more, ~12 s of the bench's 15 minutes.
 */
const COMPANION_RUNS = Math.min(LISTING_RUNS, 3)
const figures: Figure[] = []

function add(figure: Omit<Figure, 'median' | 'min' | 'max' | 'runs'>, samples: number[]): Figure {
  const f = { ...figure, ...stats(samples) }
  figures.push(f)
  console.error(`  ${f.group} ${f.name}${f.size ? ` @${f.size}` : ''}: ${f.median.toFixed(1)} ${f.unit} [${f.min.toFixed(1)}..${f.max.toFixed(1)}]`)
  return f
}

/**
 * The stream figures: the bare SDK client (the baseline), acpx, the Host, the
 * renderer, and the Host with the agent over SSH to 127.0.0.1 (an sshd the
 * bench starts) as a ratio to the Host with the local agent; acpx and SSH at
 * 2,000 and 20,000 chunks, the others at 200,000 too. `sshOnly`
 * (BENCH_ONLY=ssh): only the two Host figures, at every size.
 */
async function streamThroughput(sshOnly = false): Promise<void> {
  const sizes = process.env.BENCH_STREAM_SIZES ? process.env.BENCH_STREAM_SIZES.split(',').map(Number) : quick ? [2_000] : [2_000, 20_000, 200_000]
  const browser = sshOnly ? null : await launchBrowser()
  const sshd = await startSshd()
  // One warm-up run of each figure, at the first size it is measured at: at the next sizes every process that stays
  // (the bench's with its in-process Host, the browser) has run the same stream already, and each run starts its
  // session (and the floor its page and client) anew as the warm-up did. At 200,000 chunks the warm-ups took ~85 of
  // the group's 345 s.
  const warmed = new Set<string>()
  const warmup = (figure: string): number => (warmed.has(figure) ? 0 : (warmed.add(figure), 1))
  try {
    for (const size of sizes) {
      const runs = size >= 200_000 ? 1 : RUNS
      await withTempDir('stream', async (root) => {
        // Each figure's runs (and warm-up) timed, as the other groups' phases are: the whole bench is to stay under 15 minutes.
        const phase = phases(`stream @${size}`)
        await mkdir(join(root, 'project'), { recursive: true })
        // BENCH_ONLY=ssh: no bare SDK baseline, no peer, no renderer.
        const bare = sshOnly
          ? null
          : add(
              { group: '1', name: 'stream: bare SDK client (baseline, the pipe)', unit: 'chunks/s', size },
              await repeat(runs, () => bareSdkStream(size, join(root, 'project')), warmup('bare'))
            )
        if (bare) {
          Object.assign(bare, { ratio: 1, baseline: 'bare SDK' })
          phase('the bare SDK client')
        }
        // The peer and the agent over SSH are given at 2,000 and 20,000 chunks: ratios for scale, not goals. At
        // 200,000 they took 10 and 15 s of the group's ~120 (the whole bench is to stay under 15 minutes).
        const scaleOnly = size < 200_000
        if (bare && scaleOnly) {
          const acpx = add(
            { group: '1', name: 'stream: acpx 0.19 (peer)', unit: 'chunks/s', size },
            await repeat(runs, () => acpxStream(size, join(root, 'project'), join(root, 'acpx-home')), warmup('acpx'))
          )
          acpx.ratio = acpx.median / bare.median
          acpx.baseline = 'bare SDK'
          phase('acpx')
        }
        const app = await openApp(join(root, 'app'))
        try {
          const host = add(
            { group: '1', name: 'stream: Switchboard Host (store + transcript)', unit: 'chunks/s', size },
            await repeat(runs, () => hostStream(app, size), warmup('host'))
          )
          if (bare) Object.assign(host, { ratio: host.median / bare.median, baseline: 'bare SDK' })
          phase('the app opened, the Host')
          // The same agent over SSH to 127.0.0.1, as a ratio to the local one (BENCH_ONLY=ssh: at every size).
          if (scaleOnly || sshOnly) {
            const overSsh = await openSshApp(join(root, 'ssh'), sshd)
            try {
              const ssh = add(
                { group: '1', name: 'stream: Switchboard Host, agent over SSH to 127.0.0.1', unit: 'chunks/s', size },
                await repeat(runs, () => hostStream(overSsh, size), warmup('ssh'))
              )
              Object.assign(ssh, { ratio: ssh.median / host.median, baseline: 'Host, local agent' })
            } finally {
              await overSsh.close()
            }
            phase('over SSH')
          }
          if (bare && browser) {
            // Where the goals apply, the floor (what any window does with the same stream here) and each run's CPU by process.
            const floored = size === 20_000 || size === 200_000
            const cpu: { window?: CpuUse; floor?: CpuUse } = {}
            const floor = floored
              ? add(
                  { group: '1', name: 'stream, floor: the bare SDK client forwarding to a bare page (Chromium)', unit: 'chunks/s', size },
                  await repeat(
                    runs,
                    async () => {
                      const { result, cpu: used } = await withCpu(() => streamFloor(browser, size, join(root, 'project')))
                      cpu.floor = used
                      return result
                    },
                    warmup('floor')
                  )
                )
              : null
            if (floor) phase('the floor')
            const renderer = add(
              { group: '1', name: 'stream: end to end into the renderer (Chromium)', unit: 'chunks/s', size },
              await repeat(
                runs,
                async () => {
                  const { result, cpu: used } = await withCpu(() => rendererStream(app, browser, size))
                  cpu.window = used
                  return result
                },
                warmup('renderer')
              )
            )
            phase('the renderer')
            renderer.ratio = renderer.median / bare.median
            renderer.baseline = 'bare SDK'
            if (floor && cpu.floor && cpu.window) {
              Object.assign(floor, { ratio: floor.median / bare.median, baseline: 'bare SDK', note: `last run: ${describeCpu(cpu.floor)}` })
              renderer.note = `last run: ${describeCpu(cpu.window)}`
              const least = size === 20_000 ? 0.5 : 0.9
              renderer.goal = `≥ ${least} × bare SDK`
              renderer.met = renderer.ratio >= least
              if (!renderer.met && (floor.ratio ?? 0) < least)
                renderer.reach = `out of reach here: the floor reads ${(floor.ratio ?? 0).toFixed(2)} × bare SDK`
            }
          }
        } finally {
          await app.close()
        }
      })
    }
  } finally {
    await browser?.close()
    await sshd.close()
  }
}

async function frameFigures(): Promise<void> {
  const chunks = quick ? 1_500 : 4_000
  const browser = await launchBrowser()
  try {
    await withTempDir('frames', async (root) => {
      // Two agents of about 1,000 chunks/s each: 2 chunks per 1 ms pause (timers add their own overhead).
      const app = await openApp(root, 2, { SCRIPTED_AGENT_CHUNK_DELAY_MS: '1', SCRIPTED_AGENT_CHUNKS_PER_DELAY: '2' })
      try {
        // Each run of the window, then its baseline at the rate the window got: the same load, the least page.
        const runs: Awaited<ReturnType<typeof framesWhileStreaming>>[] = []
        const floors: Awaited<ReturnType<typeof framesFloor>>[] = []
        for (let i = 0; i < (quick ? 1 : 3); i++) {
          const run = await framesWhileStreaming(app, browser, chunks)
          runs.push(run)
          floors.push(await framesFloor(app, browser, chunks, run.rate / 2))
        }
        const rate = stats(runs.map((r) => r.rate)).median
        const note = `2 panes, ${Math.round(rate).toLocaleString('en-US')} chunks/s in all`
        add(
          { group: '2', name: 'frames while streaming: p50', unit: 'ms', size: chunks, note },
          runs.map((r) => r.p50)
        )
        const floor = add(
          { group: '2', name: 'frames, baseline: a bare page appending the same text under the same load: p99', unit: 'ms', size: chunks },
          floors.map((r) => r.p99)
        )
        const p99 = add(
          { group: '2', name: 'frames while streaming: p99', unit: 'ms', size: chunks, note },
          runs.map((r) => r.p99)
        )
        p99.ratio = p99.median / floor.median
        p99.baseline = 'bare page'
        p99.goal = 'p99 ≤ 33 ms at 2,000 chunks/s'
        p99.met = p99.median <= 33
        if (!p99.met && floor.median > 33) p99.reach = `out of reach here: the bare page reads ${floor.median.toFixed(1)} ms`
      } finally {
        await app.close()
      }
    })
  } finally {
    await browser.close()
  }
}

/**
 * A timing over data folders of 50 projects and N sessions at each size, as a
 * ratio to the same timing over one session; the goal applies at 10,000
 * (`limitMs`: a time, or `maxRatio`: at most that many times the baseline).
 */
async function overDataFolders(
  what: { prefix: string; name: string; goal: string; limitMs?: number; maxRatio?: number; sizes: number[] },
  measure: (browser: Browser, dataDir: string) => Promise<number[]>
): Promise<void> {
  const browser = await launchBrowser()
  try {
    const baseline = await withTempDir(`${what.prefix}-base`, async (root) => {
      const { dataDir } = await makeDataset(root, { projects: 1, sessions: 1, turnsPerSession: 1 })
      await settleDisk()
      return add({ group: '3', name: `${what.name}, 1 session (baseline)`, unit: 'ms', size: 1 }, await measure(browser, dataDir))
    })
    baseline.ratio = 1
    baseline.baseline = '1 session'
    for (const size of what.sizes) {
      await withTempDir(what.prefix, async (root) => {
        const { dataDir } = await makeDataset(root, { projects: 50, sessions: size, turnsPerSession: 1 })
        await settleDisk()
        const f = add({ group: '3', name: `${what.name}, 50 projects`, unit: 'ms', size }, await measure(browser, dataDir))
        f.ratio = f.median / baseline.median
        f.baseline = '1 session'
        if (size === 10_000) {
          f.goal = what.goal
          f.met = what.maxRatio !== undefined ? f.ratio <= what.maxRatio : f.median < (what.limitMs ?? Infinity)
        }
      })
    }
  } finally {
    await browser.close()
  }
}

/** What the built window loads before its first paint (bench/initial-js.ts): a size, the same in every run. */
async function initialJavaScriptFigure(): Promise<void> {
  const initial = await initialJavaScript(join(repoRoot, 'out', 'renderer'))
  const f = add(
    {
      group: '3',
      name: 'initial JavaScript: the script index.html loads and the chunks it preloads or imports (minified, not compressed)',
      unit: 'KB',
      note: `${initial.files.length} files, of ${Math.round(initial.allBytes / 1000).toLocaleString('en-US')} KB of JavaScript in all`
    },
    [initial.bytes / 1000]
  )
  f.goal = '< 400 KB'
  f.met = f.median < 400
}

/**
 * Start to the sidebar painted, at 1 (the baseline), 1,000, 10,000 and 100,000 sessions
 * (BENCH_LISTING_SIZES=1000,10000 chooses). The goal: 10,000 at most 1.3 × the baseline.
 *
 * The sizes up to 10,000 start in turn with the baseline, one start of each in every round: a ratio of two
 * series measured a minute apart moved with whatever the machine did in between (at 8ae58d3, one of four runs
 * read 1.68 × with every one of its 10,000-session starts slower than the other runs' medians, where the other
 * three read 1.09–1.28 ×). Larger sizes start after, each in a series of its own.
 */
async function listingFigures(): Promise<void> {
  const chosen = (process.env.BENCH_LISTING_SIZES ?? '').split(',').filter(Boolean).map(Number)
  const sizes = chosen.length ? chosen : quick ? [1_000] : [1_000, 10_000, 100_000]
  const inTurn = sizes.filter((size) => size <= 10_000)
  const name = 'listing: start to sidebar painted'
  const browser = await launchBrowser()
  const phase = phases('listing')
  try {
    // Seeded once a run (seeds.ts): search, startup and app-memory are lent the same folders.
    const dataset = (size: number): Promise<string> => seededDataDir(listingShape(size))
    const folders = new Map<number, string>()
    for (const size of [1, ...inTurn]) folders.set(size, await dataset(size))
    await settleDisk()
    phase(`its data folders of ${[1, ...inTurn].join(', ')} sessions`)
    const hostOpen = new Map<number, number[]>([1, ...sizes].map((size) => [size, []]))
    const starts = new Map<number, number[]>(inTurn.map((size) => [size, []]))
    const startOf = async (size: number, run: number): Promise<number> =>
      listing(browser, folders.get(size)!, { parts: run >= 0 ? { hostOpenMs: hostOpen.get(size)! } : undefined })
    const baselineSamples = await oneSessionStarts(browser, folders.get(1)!, { hostOpenMs: hostOpen.get(1)! }, async (run) => {
      for (const size of inTurn) {
        const ms = await startOf(size, run)
        if (run >= 0) starts.get(size)!.push(ms)
      }
    })
    const baseline = add({ group: '3', name: `${name}, 1 session (baseline)`, unit: 'ms', size: 1 }, baselineSamples)
    baseline.ratio = 1
    baseline.baseline = '1 session'
    const hostOpenFigure = (size: number): void => {
      add({ group: '3', name: 'listing: of it, the Host opening the data folder (db.json read and indexed)', unit: 'ms', size }, hostOpen.get(size)!)
    }
    hostOpenFigure(1)
    const sizeFigure = (size: number, samples: number[]): void => {
      const f = add({ group: '3', name: `${name}, 50 projects`, unit: 'ms', size }, samples)
      f.ratio = f.median / baseline.median
      f.baseline = '1 session'
      if (size === 10_000) {
        f.goal = '≤ 1.3 × 1 session'
        f.met = f.ratio <= 1.3
      }
      hostOpenFigure(size)
    }
    for (const size of inTurn) sizeFigure(size, starts.get(size)!)
    phase('the starts in turn')
    for (const size of sizes.filter((s) => s > 10_000)) {
      folders.set(size, await dataset(size))
      await settleDisk()
      phase(`its data folder of ${size} sessions`)
      sizeFigure(size, await repeat(LISTING_RUNS, (run) => startOf(size, run)))
      phase(`the starts at ${size}`)
    }
  } finally {
    await browser.close()
  }
}

/**
 * The one-session starts of the window, each in turn with its companions': the floor's (a bare page drawing the
 * same rows from the same Host), the window's picture drawn by the least script (its first screen with its rows,
 * without its own script), the window's warm start (a browser profile kept between starts), and the build
 * before's, fresh and warm, when given (BENCH_FIRST_PAINT_BEFORE). Returns the window's fresh starts.
 */
function oneSessionStarts(
  browser: Browser,
  dataDir: string,
  parts: { hostOpenMs: number[] },
  eachRound: (run: number) => Promise<void>
): Promise<number[]> {
  return withTempDir('floor-page', async (dir) => {
    await writeFloorPage(dir)
    const pictureDir = join(dir, 'picture')
    await writePicturePage(browser, dataDir, pictureDir)
    const profiles: WarmProfile[] = []
    const profile = async (name: string): Promise<WarmProfile> => {
      profiles.push(await warmProfile(join(dir, name)))
      return profiles[profiles.length - 1]
    }
    try {
      // `all`: in every round (the build before's: a goal); the others in the first COMPANION_RUNS.
      const companions: { options: ListingOptions; samples: number[]; all?: boolean }[] = [
        { options: { pageDir: dir, label: 'listing-floor' }, samples: [] },
        { options: { pageDir: pictureDir, label: 'listing-picture' }, samples: [] },
        { options: { warm: await profile('profile-window'), label: 'listing-warm' }, samples: [] },
        { options: { pageDir: pictureDir, warm: await profile('profile-picture'), label: 'listing-picture-warm' }, samples: [] }
      ]
      if (buildBefore) {
        companions.push({ options: { pageDir: buildBefore, label: 'listing-before' }, samples: [], all: true })
        companions.push({
          options: { pageDir: buildBefore, warm: await profile('profile-before'), label: 'listing-before-warm' },
          samples: [],
          all: true
        })
      }
      const [floor, picture, warm, pictureWarm, before, beforeWarm] = companions.map((c) => c.samples)
      // A browser keeps V8's code for a script from its third load on: each profile's first two loads are not timed
      // (the third is the warm-up below), and the fresh starts keep the one warm-up every size has.
      for (let load = 0; load < 2; load++) for (const c of companions) if (c.options.warm) await listing(browser, dataDir, c.options)
      const samples = await repeat(LISTING_RUNS, async (run) => {
        for (const c of companions) {
          if (run >= COMPANION_RUNS && !c.all) continue
          const ms = await listing(browser, dataDir, c.options)
          if (run >= 0) c.samples.push(ms)
        }
        const ms = await listing(browser, dataDir, { parts: run >= 0 ? parts : undefined })
        await eachRound(run)
        return ms
      })
      add({ group: '3', name: 'listing: the floor, a bare page drawing the same rows from the same Host, 1 session', unit: 'ms', size: 1 }, floor)
      const warmFigure = add(
        { group: '3', name: 'listing: warm start (the browser profile kept between starts), 1 session', unit: 'ms', size: 1 },
        warm
      )
      // Against the window's starts of the same rounds.
      const sameRounds = samples.slice(0, COMPANION_RUNS)
      warmFigure.ratio = warmFigure.median / stats(sameRounds).median
      warmFigure.baseline = 'a new browser context'
      pictureFigures(picture, sameRounds, '')
      pictureFigures(pictureWarm, warm, ', warm starts')
      if (buildBefore) {
        firstPaintAgainstBefore('', samples, before, picture)
        firstPaintAgainstBefore(', warm starts', warm, beforeWarm, pictureWarm)
      }
      return samples
    } finally {
      for (const p of profiles) await p.context.close()
    }
  })
}

/** The window's picture drawn by the least script (`writePicturePage`), and its share of the window's own start. */
function pictureFigures(picture: number[], window: number[], kind: string): void {
  const f = add(
    {
      group: '3',
      name: `listing: the window's picture, its rows drawn by the floor's script (no script of the window's), 1 session${kind}`,
      unit: 'ms',
      size: 1
    },
    picture
  )
  f.ratio = f.median / stats(window).median
  f.baseline = 'the window'
}

/**
 * BENCH_FIRST_PAINT_BEFORE=<folder>: another build's `out/renderer` (the build before a change, e.g. that of
 * `dd45fbc`, before issue 18's part 2), whose one-session starts run in turn with this build's, from the same Host.
 */
const buildBefore = process.env.BENCH_FIRST_PAINT_BEFORE

/**
 * This build's one-session first paint as a share of the build before's, in the same run: the goal is half.
 * `picture`: the window's picture drawn by the least script, started as `window` was (what no window drawing it could do without).
 */
function firstPaintAgainstBefore(kind: string, window: number[], before: number[], picture: number[]): void {
  const old = add({ group: '3', name: `listing: the build before (${buildBefore}), 1 session${kind}`, unit: 'ms', size: 1 }, before)
  const f = add({ group: '3', name: `listing: first paint, 1 session, against the build before${kind}`, unit: 'ms', size: 1 }, window)
  f.ratio = f.median / old.median
  f.baseline = 'the build before'
  f.goal = '≤ 0.5 × the build before'
  f.met = f.ratio <= 0.5
  // Out of reach only if the window's picture, with its rows drawn by the least script, could not do it either.
  const pictureRatio = stats(picture).median / old.median
  f.note = `the window's picture by the least script: ${pictureRatio.toFixed(2)} ×`
  if (!f.met && pictureRatio > 0.5) f.reach = `out of reach here: the window's picture alone takes ${pictureRatio.toFixed(2)} × the build before`
}

async function reopenFigures(): Promise<void> {
  const sizes = quick ? [1_000] : [100, 1_000, 10_000]
  const browser = await launchBrowser()
  try {
    /** The window's opens of a session of `entries`, and with `picture` the open's picture's (`writeOpenPicture`), in turn. */
    const measure = async (entries: number, scroll: boolean, picture = false): Promise<{ results: Reopened[]; pictured: number[] }> =>
      withTempDir('reopen', async (root) => {
        const turns = Math.max(1, Math.round(entries / ENTRIES_PER_TURN))
        const { dataDir, longSessionTitle, marker, longSessionIds } = await makeDataset(root, {
          projects: 1,
          sessions: 1,
          turnsPerSession: 1,
          longTurns: turns
        })
        const pictureDir = join(root, 'picture')
        if (picture) await writeOpenPicture(browser, dataDir, longSessionIds[0], longSessionTitle!, `the final answer ${marker}`, pictureDir)
        const pictureOpen = (): Promise<number> => openPastSession(browser, dataDir, longSessionTitle!, marker, async (_page, ms) => ms, pictureDir)
        const results: Reopened[] = []
        const pictured: number[] = []
        await reopen(browser, dataDir, longSessionTitle!, marker, false) // warm-up
        if (picture) await pictureOpen()
        for (let i = 0; i < RUNS; i++) {
          results.push(await reopen(browser, dataDir, longSessionTitle!, marker, scroll && i === 0))
          if (picture) pictured.push(await pictureOpen())
        }
        return { results, pictured }
      })
    /** The open's picture (what is left of the window's open is its own script), beside the window's open `of`. */
    const pictureFigure = (size: number, pictured: number[], of: Figure): Figure => {
      const f = add(
        {
          group: '4',
          name: "reopen: the open's picture, the opened pane's elements put in at the answer (no script of the window's)",
          unit: 'ms',
          size
        },
        pictured
      )
      f.note = `the window's open ${(of.median / f.median).toFixed(2)} × this`
      return f
    }
    const { results: base, pictured: basePictured } = await measure(12, false, true)
    const baseline = add(
      { group: '4', name: 'reopen: click to first paint of the tail (baseline)', unit: 'ms', size: 12 },
      base.map((r) => r.firstPaintMs)
    )
    baseline.ratio = 1
    baseline.baseline = '12 entries'
    pictureFigure(12, basePictured, baseline)
    const baseHeap = add(
      { group: '5', name: 'renderer JS heap, one short session open (baseline)', unit: 'MB', size: 12 },
      base.map((r) => r.heapMb)
    )
    baseHeap.ratio = 1
    baseHeap.baseline = '12 entries'
    for (const size of sizes) {
      const goalSize = size === (quick ? 1_000 : 10_000)
      const { results, pictured } = await measure(size, true, goalSize)
      const f = add(
        { group: '4', name: 'reopen: click to first paint of the tail', unit: 'ms', size },
        results.map((r) => r.firstPaintMs)
      )
      f.ratio = f.median / baseline.median
      f.baseline = '12 entries'
      const picture = goalSize ? pictureFigure(size, pictured, f) : undefined
      const scrolled = results.find((r) => Number.isFinite(r.scrollFps))!
      const fps = add({ group: '4', name: 'reopen: scrolling the whole thread', unit: 'fps', size }, [scrolled.scrollFps])
      fps.note = `p99 frame ${scrolled.frameP99Ms.toFixed(1)} ms`
      fps.goal = '60 fps'
      fps.met = scrolled.scrollFps >= 55
      const heap = add(
        { group: '5', name: 'renderer JS heap with the session open', unit: 'MB', size },
        results.map((r) => r.heapMb)
      )
      heap.ratio = heap.median / baseHeap.median
      heap.baseline = '12 entries'
      if (size === 10_000) {
        f.goal = '< 200 ms'
        f.met = f.median < 200
      }
      // Out of reach only if the open's picture, with no script of the window's, could not do it either.
      if (picture && f.met === false && picture.median >= 200)
        f.reach = `out of reach here: the open's picture alone takes ${picture.median.toFixed(0)} ms`
    }
  } finally {
    await browser.close()
  }
}

async function memoryFigures(): Promise<void> {
  const chunks = quick ? 2_000 : 20_000
  const samples: HostMemory[] = []
  for (let i = 0; i < (quick ? 1 : 2); i++) samples.push(await withTempDir('memory', (root) => hostMemory(root, 8, chunks)))
  const idle = add(
    { group: '5', name: 'Host RSS (serve.js), 8 agents defined, none running (baseline)', unit: 'MB' },
    samples.map((s) => s.idle)
  )
  idle.ratio = 1
  idle.baseline = 'idle Host'
  const peak = add(
    { group: '5', name: `Host RSS peak, 8 agents × 1 session streaming ${chunks.toLocaleString('en-US')} chunks each at once`, unit: 'MB' },
    samples.map((s) => s.peak)
  )
  peak.ratio = peak.median / idle.median
  peak.baseline = 'idle Host'
  peak.goal = '< 300 MB'
  peak.met = peak.median < 300
  const after = add(
    { group: '5', name: 'Host RSS 1 s after those turns', unit: 'MB' },
    samples.map((s) => s.after)
  )
  after.ratio = after.median / idle.median
  after.baseline = 'idle Host'
}

/**
 * Costly agent text (`/payload`): each of the held-out inputs as a message,
 * and the 5 MB line in each other place agent text is shown; a 1,000-character
 * message is the baseline. Goals: the window answers within 100 ms (longest
 * stall, key wait) and the page's renderer stays under 1 GB.
 */
async function costlyTextFigures(): Promise<void> {
  const runs = quick ? 1 : 3
  const cases: { kind: string; where: string; size?: number; label: string }[] = [
    { kind: 'line', where: 'message', size: 1_000, label: 'a message of 1,000 characters (baseline)' },
    ...['line', 'quotes', 'list', 'brackets', 'emphasis'].map((kind) => ({
      kind,
      where: 'message',
      label: `${PATHOLOGICAL[kind].describe(PATHOLOGICAL[kind].size)}, as a message`
    })),
    ...(quick ? [] : ['thought', 'tool', 'plan', 'permission']).map((where) => ({
      kind: 'line',
      where,
      label: `${PATHOLOGICAL.line.describe(PATHOLOGICAL.line.size)}, as ${{ thought: 'a thought', tool: 'a tool call’s title and text', plan: 'a plan entry', permission: 'a permission request' }[where]}`
    }))
  ]
  const browser = await launchBrowser()
  try {
    let baseline: Record<'shown' | 'stall' | 'key' | 'memory', Figure> | null = null
    for (const c of cases) {
      // Each case in a Host of its own: the sessions of megabytes before it are not its burden.
      const results = await withTempDir('costly', async (root) => {
        const app = await openApp(root)
        try {
          const samples: CostlyTextResult[] = []
          if (!baseline) await costlyText(app, browser, c.kind, c.where, c.size) // warm-up
          for (let i = 0; i < runs; i++) samples.push(await costlyText(app, browser, c.kind, c.where, c.size))
          return samples
        } finally {
          await app.close()
        }
      })
      const heap = stats(results.map((r) => r.heapMb)).max
      const figure = {
        shown: add(
          { group: '8', name: `costly text: prompt to shown — ${c.label}`, unit: 'ms' },
          results.map((r) => r.shownMs)
        ),
        stall: add(
          {
            group: '8',
            name: `costly text: longest main-thread task — ${c.label}`,
            unit: 'ms',
            note: `longest gap of a 5 ms timer ${stats(results.map((r) => r.stallMs)).median.toFixed(0)} ms`
          },
          results.map((r) => r.taskMs)
        ),
        key: add(
          { group: '8', name: `costly text: longest wait of a key typed meanwhile — ${c.label}`, unit: 'ms' },
          results.map((r) => r.keyMs)
        ),
        memory: add(
          { group: '8', name: `costly text: renderer memory peak — ${c.label}`, unit: 'MB', note: `JS heap peak ${heap.toFixed(0)} MB` },
          results.map((r) => r.rendererMb)
        )
      }
      if (baseline) {
        for (const key of ['shown', 'stall', 'key', 'memory'] as const) {
          if (baseline[key].median <= 0) continue
          figure[key].ratio = figure[key].median / baseline[key].median
          figure[key].baseline = '1,000 characters'
        }
        figure.stall.goal = figure.key.goal = '< 100 ms in every run'
        figure.stall.met = figure.stall.max < 100
        figure.key.met = figure.key.max < 100
        figure.memory.goal = '< 1 GB'
        figure.memory.met = figure.memory.max < 1024
      } else {
        baseline = figure
        for (const f of Object.values(figure)) {
          if (f.median <= 0) continue
          f.ratio = 1
          f.baseline = '1,000 characters'
        }
      }
    }
  } finally {
    await browser.close()
  }
}

/**
 * Host start (`bench/startup.ts`: serve.js from its spawn to ready, and to its
 * search index complete) over data folders of 50 projects and N sessions, as a
 * ratio to ready on an empty data folder: the first start (no search index on
 * disk: every transcript is read) and the next one (the index kept on disk).
 * Each start is paired with a start on the empty folder just before it, and a
 * row's ratio is to the median of its own pairs: on a machine whose load
 * drifts over minutes, both sides of a ratio see the same load. The baseline
 * row holds every empty start of the run. Goal: ready at 10,000 sessions ≤
 * 1.5 × the empty folder.
 */
async function startupFigures(): Promise<void> {
  const sizes = quick ? [1_000] : [100, 1_000, 10_000]
  const runs = quick ? 1 : Number(process.env.BENCH_STARTUP_RUNS ?? 3)
  // Seeded once a run (seeds.ts): the 1,000 and 10,000 folders are the listing's and search's.
  const emptyDir = await seededDataDir({ projects: 0, sessions: 0, turnsPerSession: 1 })
  await hostStart(emptyDir, false)
  const empties: number[] = []
  const rows: Figure[] = []
  for (const size of sizes) {
    const dataDir = await seededDataDir(listingShape(size))
    for (const fresh of [true, false]) {
      const pairs: { empty: number; sample: HostStart }[] = []
      // The warm-up of the next start is the start that writes the index after a first one. The first starts have none
      // (each deletes the index and reads every transcript anew; the empty folder's start before the sizes warms node):
      // until issue 40's twenty-third round they had one, ~7 s of the bench's 15 minutes.
      for (let i = fresh ? 0 : -1; i < runs; i++) {
        const empty = (await hostStart(emptyDir, false)).readyMs
        const sample = await hostStart(dataDir, fresh)
        if (i >= 0) pairs.push({ empty, sample })
      }
      const baseline = stats(pairs.map((p) => p.empty)).median
      empties.push(...pairs.map((p) => p.empty))
      const which = fresh ? 'first start (no index on disk)' : 'next start (index on disk)'
      const ready = add(
        { group: '9', name: `Host start to ready, ${which}`, unit: 'ms', size },
        pairs.map((p) => p.sample.readyMs)
      )
      const search = add(
        { group: '9', name: `Host start to search complete, ${which}`, unit: 'ms', size },
        pairs.map((p) => p.sample.searchMs)
      )
      add(
        { group: '9', name: `Host start: longest wait for a search's answer until complete, ${which}`, unit: 'ms', size },
        pairs.map((p) => p.sample.longestAnswerMs)
      )
      for (const f of [ready, search]) {
        f.ratio = f.median / baseline
        f.baseline = `empty folder (its pairs: ${Math.round(baseline).toLocaleString('en')} ms)`
        rows.push(f)
      }
      if (size === 10_000 && !fresh) {
        ready.goal = '≤ 1.5 × empty folder'
        ready.met = (ready.ratio ?? Infinity) <= 1.5
      }
    }
  }
  // The baseline row first in the table, as in the other groups.
  const base = add({ group: '9', name: 'Host start to ready, empty data folder (baseline, every pair)', unit: 'ms', size: 0 }, empties)
  base.ratio = 1
  base.baseline = 'empty folder'
  figures.splice(figures.indexOf(base), 1)
  figures.splice(figures.indexOf(rows[0]), 0, base)
}

async function main(): Promise<void> {
  const started = Date.now()
  console.error(`Switchboard benchmarks${quick ? ' (quick)' : ''}: node ${process.version}, ${RUNS} run(s) per figure`)
  const only = new Set((process.env.BENCH_ONLY ?? '').split(',').filter(Boolean))
  const want = (name: string): boolean => only.size === 0 || only.has(name)
  // Said at once, not after the figures before the listing's: a start of a page that is not there would only time out.
  if (buildBefore && want('listing') && !existsSync(join(buildBefore, 'index.html'))) {
    throw new Error(`BENCH_FIRST_PAINT_BEFORE=${buildBefore}: no index.html there; give the out/renderer folder of another build`)
  }
  // Each group's time is said as it ends: the whole run is to stay under 15 minutes.
  const group = async (name: string, run: () => Promise<void>): Promise<void> => {
    if (!want(name)) return
    const at = Date.now()
    await run()
    // This process's memory after the group: the later groups' Hosts run in it (the search's index at 100,000 sessions left it at ~1.1 GB).
    const { heapUsed, rss } = process.memoryUsage()
    console.error(
      `${name}: ${Math.round((Date.now() - at) / 1000)} s (this process after it: heap ${Math.round(heapUsed / 2 ** 20)} MB, RSS ${Math.round(rss / 2 ** 20)} MB)`
    )
    // What is measured so far is kept as each group ends: a run stopped part way keeps its figures.
    const partial = { date: new Date().toISOString(), node: process.version, quick, partial: true, figures }
    await writeFile(join(repoRoot, 'bench', 'results.json'), JSON.stringify(partial, null, 2) + '\n')
  }
  try {
    if (want('stream')) await group('stream', () => streamThroughput())
    else if (want('ssh')) await group('ssh', () => streamThroughput(true))
    await group('frames', frameFigures)
    await group('listing', async () => {
      await initialJavaScriptFigure()
      await listingFigures()
    })
    await group('search', () => searchFigures(add, quick))
    await group('reopen', reopenFigures)
    await group('long', () => longFigures(add, quick, RUNS))
    await group('soak', () => soakFigures(add, quick))
    await group('seed-memory', () => seedMemoryFigures(add, quick))
    await group('memory', memoryFigures)
    await group('checkpoint', () => checkpointFigures(add, quick))
    await group('costly', costlyTextFigures)
    await group('startup', startupFigures)
    await group('idle', () => idleFigures(add, quick))
    await group('app-memory', () => appMemoryFigures(add, quick))
  } finally {
    // The data folders the listing, search, startup and app-memory were lent (seeds.ts), once none needs them.
    const at = Date.now()
    await releaseSeeds()
    console.error(`the seeded data folders removed: ${Math.round((Date.now() - at) / 1000)} s`)
  }
  const result = { date: new Date().toISOString(), node: process.version, quick, seconds: Math.round((Date.now() - started) / 1000), figures }
  await writeFile(join(repoRoot, 'bench', 'results.json'), JSON.stringify(result, null, 2) + '\n')
  console.log(table(figures))
  console.error(`done in ${result.seconds} s; bench/results.json written`)
}

main().catch((error: Error) => {
  console.error(`bench failed: ${error.stack ?? error.message}`)
  process.exit(1)
})
