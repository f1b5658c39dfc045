import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, expect } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, processesWithEnv, removeDir, tempDir } from '../helpers'

/** What every offline run of a real agent has: the parts below, made fresh for each test. */
export interface OfflineRun<Api> {
  /** The test's temporary folder, holding everything below. */
  root: string
  /** An empty project folder. */
  project: string
  /** The Host's data folder. */
  dataDir: string
  /** The running Host; a test that restarts it assigns the new one here. */
  host: Host
  /** The agent's fake model API. */
  api: Api
}

/** How one real agent is run offline (claude.ts, codex.ts, gemini.ts each give one). */
export interface OfflineAgent<Api extends { close(): Promise<void> }, Extra extends object> {
  /** The temporary folder's prefix. */
  prefix: string
  /** Fails the test before anything is made when the agent is not installed. */
  check?(): void
  /** Starts the fake model API. */
  startApi(): Promise<Api>
  /** The agent's own part of the set-up in `root` (its HOME, its settings), before the Host opens. */
  prepare(root: string, api: Api): Promise<Extra>
  /** The HOME every process the agent starts has: none may still run after the test. */
  homeOf(extra: Extra): string
  /** What the agent asked of the fake that the fake does not serve: none may be. */
  unknownOf(api: Api): string[]
}

/**
 * The set-up the real-agent suites share, made fresh for each test of the file
 * that calls this (at its top level, before its own hooks): a temporary folder
 * with a project, the fake API, the agent's own part (`prepare`) and a Host.
 * After each test the Host and the fake are closed, and it fails if anything
 * the agent started (HOME set to the test's folder) still runs, or if the
 * agent called anything of the API the fake does not serve. Returns one object
 * whose fields are the running test's.
 */
export function offlinePerTest<Api extends { close(): Promise<void> }, Extra extends object>(
  agent: OfflineAgent<Api, Extra>
): OfflineRun<Api> & Extra {
  const run: Partial<OfflineRun<Api>> = {}
  let extra: Extra | undefined
  beforeEach(async () => {
    agent.check?.()
    const root = await tempDir(agent.prefix)
    Object.assign(run, { root, project: join(root, 'project'), dataDir: join(root, 'data') })
    await mkdir(join(root, 'project'))
    const api = await agent.startApi()
    run.api = api
    extra = await agent.prepare(root, api)
    Object.assign(run, extra)
    run.host = await openHost(join(root, 'data'))
  })
  afterEach(async () => {
    if (!run.root) return
    try {
      await run.host?.close()
      await run.api?.close()
      // Everything the agent started had HOME set to our folder: none of it may remain.
      if (extra) expect(processesWithEnv(`HOME=${agent.homeOf(extra)}`)).toEqual([])
      // The agent called nothing of the API the fake does not serve.
      if (run.api) expect(agent.unknownOf(run.api)).toEqual([])
    } finally {
      await removeDir(run.root)
      extra = undefined
      for (const key of Object.keys(run)) delete run[key as keyof typeof run]
    }
  })
  return run as OfflineRun<Api> & Extra
}
