import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { launchBrowser } from '../test/e2e/browser'
import { Host } from '../electron/host/host'
import { SEARCH_INDEX_FILE } from '../electron/host/search/search-index'
import { makeDataset } from './data'
import { withTempDir } from './lib'
import { startProfiles } from './profile'
import { withPastSessionListed } from './ui'

/**
 * Where a past session's open spends its time, seen from the page: the click, the `sessions.open` request and its
 * answer, the chunks fetched, the tail's entry put in the page and its frame painted (each on the page's clock,
 * from the click), with the Host's index build, each request the Host answered (how long, and its CPU: this
 * process's) and its event loop held by a task (it runs in this process).
 * `node --import tsx bench/open-probe.ts [turns] [runs]`; BENCH_PROFILE / BENCH_TRACE as profile.ts; PROBE_IDLE_MS: the
 * wait before the click; PROBE_WAIT=bench: the bench's wait instead (no fetch for half a second, then an idle moment,
 * `openPastSession`); PROBE_INDEX=reading: the click as the index build reads the long transcript anew; PROBE_INDEX=off:
 * no build but at a search; PROBE_PRESS_MS: the click a hand's, the button held that long (a tenth of a second is a
 * hand's on a mouse), the times still from the press.
 */

const pressMs = process.env.PROBE_PRESS_MS ? Number(process.env.PROBE_PRESS_MS) : null

const PROBE = `(() => {
  const marks = (window.__marks = [])
  const mark = (what) => marks.push([what, performance.now()])
  window.__mark = mark
  const Native = window.WebSocket
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args)
      this.addEventListener('message', (event) => {
        const text = typeof event.data === 'string' ? event.data : ''
        if (window.__armed && text.includes('"kind":"response"')) mark('response ' + text.length + 'B')
      })
    }
    send(data) {
      if (window.__armed && typeof data === 'string') mark('send ' + (/"method":"([^"]+)"/.exec(data) || [])[1])
      return super.send(data)
    }
  }
  document.addEventListener('pointerdown', () => { window.__armed = true; mark('pointerdown') }, true)
  document.addEventListener('click', () => mark('click'), true)
  // Each long animation frame from the click on: its forced layouts (a script reading the page's size) and its own.
  window.__frames = []
  new PerformanceObserver((list) => {
    for (const f of list.getEntries()) {
      if (!window.__armed) continue
      const forced = f.scripts.reduce((n, s) => n + s.forcedStyleAndLayoutDuration, 0)
      const layout = f.startTime + f.duration - f.styleAndLayoutStart
      window.__frames.push([f.startTime, f.duration, forced, layout, f.blockingDuration])
    }
  }).observe({ type: 'long-animation-frame', buffered: false })
  window.__watch = (text) => {
    const observer = new MutationObserver(() => {
      if (!document.body.innerText.includes(text)) return
      observer.disconnect()
      mark('tail in page')
      requestAnimationFrame(() => { mark('rAF'); setTimeout(() => mark('painted')) })
    })
    observer.observe(document, { childList: true, subtree: true, characterData: true })
  }
})()`

/** Each request the Host answered: how long it took, when it was asked (the wall clock). */
const hostTimes: [string, number][] = []
const handle = Host.prototype.handle
Host.prototype.handle = async function (this: Host, ...args: Parameters<Host['handle']>) {
  const at = Date.now()
  const cpu = process.cpuUsage()
  try {
    return await handle.apply(this, args)
  } finally {
    const used = process.cpuUsage(cpu)
    hostTimes.push([`host: ${String(args[0])} took ${Date.now() - at} ms (cpu ${((used.user + used.system) / 1000).toFixed(0)})`, at])
  }
}

async function main(): Promise<void> {
  const turns = Number(process.argv[2] ?? 3)
  const runs = Number(process.argv[3] ?? 5)
  const browser = await launchBrowser()
  await withTempDir('open-probe', async (root) => {
    const { dataDir, longSessionTitle, marker } = await makeDataset(root, { projects: 1, sessions: 1, turnsPerSession: 1, longTurns: turns })
    for (let run = 0; run < runs; run++) {
      // The Host's search index build (it starts once the Host is quiet), on the wall clock: shown on the page's.
      const hostSteps: [string, number][] = []
      // PROBE_INDEX=reading: the index file is gone (as after a change to the conversation since it was saved) and the
      // click comes as the Host's index build starts reading the long transcript: the open meets it taking that in.
      const reading = process.env.PROBE_INDEX === 'reading'
      if (reading) await rm(join(dataDir, SEARCH_INDEX_FILE), { force: true })
      let readLong!: () => void
      const longRead = new Promise<void>((resolve) => (readLong = resolve))
      const search = {
        buildOnSearchOnly: process.env.PROBE_INDEX === 'off',
        onBuildStep: (step: { step: string }) => void hostSteps.push([`host: index ${step.step}`, Date.now()]),
        onTranscriptRead: (id: string) => {
          if (id !== 's-long') return
          hostSteps.push(['host: index reads the long transcript', Date.now()])
          readLong()
        }
      }
      // The Host's event loop held by one task (it shares this process): each gap over 30 ms, at its end.
      let tick = Date.now()
      const ticker = setInterval(() => {
        const at = Date.now()
        if (at - tick > 30) hostSteps.push([`host: event loop held ${at - tick} ms (from ${(at - tick).toFixed(0)} ms before)`, at])
        tick = at
      }, 5)
      await withPastSessionListed(
        browser,
        dataDir,
        longSessionTitle!,
        PROBE,
        async (page, item) => {
          const context = page.context()
          await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
          if (process.env.PROBE_WAIT === 'bench') {
            await page.waitForLoadState('networkidle')
            await page.evaluate('new Promise((r) => requestIdleCallback(() => r(), { timeout: 2000 }))')
          } else await page.waitForTimeout(Number(process.env.PROBE_IDLE_MS ?? 300))
          const sinceShown = (await page.evaluate('performance.now()')) as number
          if (reading) await longRead
          await page.evaluate(`window.__watch(${JSON.stringify(`the final answer ${marker}`)})`)
          const before = (await page.evaluate(`document.body.innerText.includes(${JSON.stringify(`the final answer ${marker}`)})`)) as boolean
          console.log(`run ${run}: tail in the page before the click: ${before}`)
          const stop = run === runs - 1 ? await startProfiles(browser, page, 'open-probe') : async () => undefined
          const cdp = await context.newCDPSession(page)
          await cdp.send('Performance.enable', { timeDomain: 'threadTicks' })
          const metric = async (): Promise<Record<string, number>> =>
            Object.fromEntries(
              ((await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] }).metrics.map((m) => [m.name, m.value])
            )
          const m0 = await metric()
          const t0 = Date.now()
          if (pressMs === null) await item.click()
          else {
            // A hand's click: pressed, held `pressMs`, let go (Playwright's click lets go at once).
            await item.hover()
            await page.mouse.down()
            await page.waitForTimeout(pressMs)
            await page.mouse.up()
          }
          await page.getByText(`the final answer ${marker}`).waitFor({ timeout: 300_000 })
          await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
          const outside = Date.now() - t0
          const m1 = await metric()
          const ms = (name: string): string => ((m1[name] - m0[name]) * 1000).toFixed(0)
          console.log(
            `run ${run}: main thread from the click to the tail painted: task ${ms('TaskDuration')} ms (script ${ms('ScriptDuration')}, layout ${ms('LayoutDuration')}, style ${ms('RecalcStyleDuration')})`
          )
          await page.waitForTimeout(100)
          await stop()
          const marks = (await page.evaluate('window.__marks')) as [string, number][]
          const resources = (await page.evaluate(
            `performance.getEntriesByType('resource').filter((e) => e.startTime >= window.__marks[0][1] - 5).map((e) => [e.name.split('/').pop(), e.startTime, e.responseEnd])`
          )) as [string, number, number][]
          const start = marks[0]?.[1] ?? 0
          const frames = (await page.evaluate('window.__frames')) as number[][]
          for (const [at, duration, forced, layout] of frames)
            console.log(
              `  frame at ${(at - start).toFixed(1)}: ${duration.toFixed(0)} ms, forced style and layout ${forced.toFixed(0)} ms, the frame's own ${layout.toFixed(0)} ms`
            )
          const origin = (await page.evaluate('performance.timeOrigin')) as number
          const steps = [...hostSteps, ...hostTimes.splice(0)].map(([what, at]) => [what, at - origin] as [string, number])
          console.log(`run ${run}: outside ${outside} ms; clicked ${sinceShown.toFixed(0)} ms into the page`)
          for (const [what, at] of [...marks, ...steps].sort((a, b) => a[1] - b[1])) console.log(`  ${(at - start).toFixed(1).padStart(7)} ${what}`)
          for (const [name, s, e] of resources) console.log(`  ${(s - start).toFixed(1).padStart(7)}..${(e - start).toFixed(1)} fetch ${name}`)
        },
        { search }
      )
      clearInterval(ticker)
    }
  })
  await browser.close()
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
