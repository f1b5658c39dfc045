import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { withTempDir } from './lib'
import { runSoak } from './soak'

/**
 * A probe of the soak's slope (not part of `npm run bench`; `npx tsx bench/soak-probe.ts`): the soak alone
 * (`runSoak`, BENCH_SOAK_MINUTES, 2), its phases and figures printed. With NODE_OPTIONS="--require ./bench/host-heap-preload.cjs"
 * and P43_PROBE_DIR the Host logs its heap there; BENCH_SERVE_JS: another build.
 */
const dir = process.env.P43_PROBE_DIR ?? '/tmp/p57/soak'
mkdirSync(dir, { recursive: true })
const minutes = Number(process.env.BENCH_SOAK_MINUTES) || 2
const started = Date.now()
// Each phase with its time (each minute's fork, search and new session; the deadline; the turns stopped).
const soak = await withTempDir('soak-probe', (root) => runSoak(root, minutes, (what) => console.error(new Date().toISOString(), what)))
writeFileSync(join(dir, `soak-${started}.json`), JSON.stringify({ started, minutes, build: process.env.BENCH_SERVE_JS ?? 'out/', ...soak }))
console.error(
  `soak ${process.env.BENCH_SERVE_JS ?? 'out/'}: idle ${soak.idleMb.toFixed(1)} MB, peak ${soak.peakMb.toFixed(1)}, slope ${soak.slopeMbPerMin.toFixed(2)} MB/min (after its first minute ${soak.slopeAfterFirstMinute.toFixed(2)}; the first minute's rise ${soak.firstMinuteRiseMb.toFixed(1)} MB; warm-up ${(soak.warmUpMs / 1000).toFixed(0)} s, +${soak.warmUpRiseMb.toFixed(1)} MB), ${soak.chunks} chunks, ${soak.forks} forks`
)
