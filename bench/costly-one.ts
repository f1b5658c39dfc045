import { launchBrowser } from '../test/e2e/browser'
import { openApp } from './app'
import { costlyText } from './costly-text'
import { withTempDir } from './lib'

/**
 * One costly-text measurement outside the full run, to look into one case:
 * `npx tsx bench/costly-one.ts KIND[,KIND…] [PLACE[,PLACE…]] [SIZE]` (after a
 * build), e.g. `line message` or `line thought,plan 200000`. With
 * BENCH_PROFILE=1 it prints where the page's main thread spent its time
 * (BENCH_PROFILE_FN=name: that function's callers; BENCH_PROFILE_FILE=path
 * keeps the profile, for DevTools); with BENCH_TRACE=1 the
 * trace events by self time (BENCH_TRACE_FILE=path keeps the trace, for
 * chrome://tracing or Perfetto); bench/profile.ts sums both up.
 */

const [kinds, places, size] = [process.argv[2] ?? 'line', process.argv[3] ?? 'message', process.argv[4] ? Number(process.argv[4]) : undefined]
const browser = await launchBrowser()
try {
  await withTempDir('costly', async (root) => {
    const app = await openApp(root)
    try {
      for (const kind of kinds.split(','))
        for (const where of places.split(',')) console.log(kind, where, JSON.stringify(await costlyText(app, browser, kind, where, size)))
    } finally {
      await app.close()
    }
  })
} finally {
  await browser.close()
}
