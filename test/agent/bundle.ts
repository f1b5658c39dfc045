import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Where the scripted agent's one-file build is, for `scriptedAgentCommand()` (./spawn.ts). */
export const SCRIPTED_AGENT_BUNDLE_ENV = 'SCRIPTED_AGENT_BUNDLE'

/**
 * Vitest `globalSetup`: builds the scripted agent (./scripted-agent.ts and everything it imports, npm packages
 * included) once per run into one JavaScript file, and names it to the test workers (which inherit the environment)
 * in SCRIPTED_AGENT_BUNDLE. Started through tsx instead, every agent spent about 0.5 s of CPU loading TypeScript
 * before its first message, most of what it ever spends; the suite starts several hundred. The agent is the same
 * code either way: `npx vitest run test/agent/scripted-agent.test.ts` runs its own tests against the bundle.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const { build, stop } = await import('esbuild')
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-scripted-agent-'))
  const outfile = join(dir, 'scripted-agent.mjs')
  await build({
    entryPoints: [fileURLToPath(new URL('./scripted-agent.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // Packages written as CommonJS call require(), which an ES module does not have of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" }
  })
  // esbuild's service process would outlive the run (test/leak-check.ts names it as leaked).
  await stop()
  process.env[SCRIPTED_AGENT_BUNDLE_ENV] = outfile
  return async () => {
    delete process.env[SCRIPTED_AGENT_BUNDLE_ENV]
    await rm(dir, { recursive: true, force: true })
  }
}
