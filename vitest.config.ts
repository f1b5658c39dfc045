import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Component tests (test/renderer/ and test/component/, in happy-dom) mount the renderer's single-file components.
  plugins: [vue()],
  test: {
    include: ['test/**/*.test.ts'],
    // After the last test, no process a test started may still run (test/leak-check.ts).
    globalSetup: ['test/leak-check.ts', 'test/bundles.ts'],
    // A backstop for a stuck test, not a speed check: a loaded 2-core machine takes several times longer than a quiet one.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Tests spawn real agent processes and a browser, and mostly wait on them: two files at a time kept 2 cores
    // about 40% busy (a whole run: 15 min of CPU in 19 min), three took the run from 19 to 15 minutes.
    maxWorkers: 3,
    // Agents are real processes: under a full parallel run a start can take seconds.
    expect: { poll: { timeout: 15_000, interval: 50 } },
    reporters: ['default']
  }
})
