import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vitest/config'

/**
 * The in-process test files: test/unit/, test/component/ and test/renderer/ call code directly and start no Host,
 * browser or agent of their own. Vitest gives every file a fresh module graph by default ("isolate"), which cost these
 * ~80 files most of their run in importing the same modules again (a whole run: import 200 s of its ~1,900 s summed).
 * The node ones share one graph per worker instead (isolate: false). Each restores what it changes (real timers, restored
 * spies, environment variables). A file that mocks a module (vi.mock, vi.doMock) keeps its own graph: in a shared one
 * the mock would reach the files after it, or come after the real module was loaded. The files in happy-dom (their
 * `// @vitest-environment happy-dom` line) are a project of their own: a worker is reused only by files of the same
 * project and environment, and keep a module graph of their own each: with one shared, sessions-store failed once in a
 * fresh-clone CI (a missed record's refetch never shown), which files shuffled on one worker (four orders, shared or
 * not) did not repeat; until that is explained they stay isolated. The node files share theirs.
 */
const IN_PROCESS_DIRS = ['test/unit', 'test/component', 'test/renderer']

const root = fileURLToPath(new URL('.', import.meta.url))
const inProcess = IN_PROCESS_DIRS.flatMap((dir) =>
  readdirSync(root + dir)
    .filter((name) => name.endsWith('.test.ts'))
    .map((file) => ({ file: `${dir}/${file}`, text: readFileSync(`${root}${dir}/${file}`, 'utf8') }))
    .filter(({ text }) => !/\bvi\.(mock|doMock)\(/.test(text))
)
const inDom = inProcess.filter(({ text }) => /^\/\/ @vitest-environment happy-dom$/m.test(text)).map(({ file }) => file)
const inNode = inProcess.map(({ file }) => file).filter((file) => !inDom.includes(file))

export default defineConfig({
  // Component tests (test/renderer/ and test/component/, in happy-dom) mount the renderer's single-file components.
  plugins: [vue()],
  test: {
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
    reporters: ['default'],
    // Projects start in the order of their names: the files that start processes first (the longest among them), the
    // short in-process ones last, where they fill the workers as the long files end.
    projects: [
      { extends: true, test: { name: 'processes', include: ['test/**/*.test.ts'], exclude: [...inNode, ...inDom] } },
      { extends: true, test: { name: 'unit', include: inNode, isolate: false } },
      { extends: true, test: { name: 'unit-dom', include: inDom } }
    ]
  }
})
