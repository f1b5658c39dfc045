import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { CheckRun } from '../../shared/race'
import { UserEnvironment } from '../../electron/host/child-processes/environment'
import { CheckRuns } from '../../electron/host/races/check-runs'

const root = await mkdtemp(join(tmpdir(), 'switchboard-check-runs-'))
afterAll(() => rm(root, { recursive: true, force: true }))

/** Runs `command` to its end; resolves with how it ended. */
function runToEnd(checks: CheckRuns, key: string, command: string): Promise<CheckRun> {
  return new Promise((resolve) => {
    checks.start(key, command, root, async (run) => resolve(run))
  })
}

describe("a race's check runs", () => {
  it('keep what a finished check printed for the Host started next on the same data folder, each run its own', async () => {
    const folder = join(root, 'race-checks')
    const first = new CheckRuns(UserEnvironment.ofProcess(), 'test-check', folder)
    const failed = await runToEnd(first, 'race-1:session-a', 'echo "3 tests failed: sum()"; exit 1')
    expect(failed).toMatchObject({ status: 'failed', exitCode: 1 })
    await runToEnd(first, 'race-1:session-b', 'echo all passed')
    await first.close()

    // The Host stopped and started again: the new one never ran these, yet says what each printed.
    const next = new CheckRuns(UserEnvironment.ofProcess(), 'test-check', folder)
    expect(await next.output('race-1:session-a')).toEqual({ text: '3 tests failed: sum()\n', truncated: false })
    expect(await next.output('race-1:session-b')).toEqual({ text: 'all passed\n', truncated: false })
    expect(await next.output('race-1:never-run')).toEqual({ text: '', truncated: false })
    // Named by a hash, readable by the user alone.
    const files = await readdir(folder)
    expect(files).toHaveLength(2)
    expect(files.every((f) => /^[0-9a-f]{32}\.json$/.test(f))).toBe(true)
    if (process.platform !== 'win32') expect((await stat(join(folder, files[0] ?? ''))).mode & 0o777).toBe(0o600)
  })

  it('a kept output that is damaged reads as nothing printed, not an error', async () => {
    const folder = join(root, 'damaged')
    const checks = new CheckRuns(UserEnvironment.ofProcess(), 'test-check', folder)
    await runToEnd(checks, 'race-2:s', 'echo fine')
    const [file] = await readdir(folder)
    await writeFile(join(folder, file ?? ''), '{ torn')
    expect(await new CheckRuns(UserEnvironment.ofProcess(), 'test-check', folder).output('race-2:s')).toEqual({ text: '', truncated: false })
  })
})
