import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SCRIPTED_AGENT_BUNDLE_ENV, TINY_SERVER_BUNDLE_ENV } from './bundle-env'

/** The helper programs the suite starts many times: the environment variable naming each one's build, and its source. */
const BUNDLED = [
  { env: SCRIPTED_AGENT_BUNDLE_ENV, name: 'scripted-agent', source: './agent/scripted-agent.ts' },
  { env: TINY_SERVER_BUNDLE_ENV, name: 'tiny-server', source: './mcp/tiny-server.ts' }
]

/**
 * Vitest `globalSetup`: builds the scripted agent and the tiny MCP server (each with everything it imports, npm
 * packages included) once per run into one JavaScript file each, and names them to the test workers (which inherit
 * the environment, as with leak-check's mark). Started through tsx instead, each of these processes spent about
 * 0.5 s of CPU loading TypeScript before its first message, most of what it ever spends; the suite starts several
 * hundred. The programs are the same code either way.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const { build, stop } = await import('esbuild')
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-test-bundles-'))
  await build({
    entryPoints: Object.fromEntries(BUNDLED.map(({ name, source }) => [name, fileURLToPath(new URL(source, import.meta.url))])),
    outdir: dir,
    outExtension: { '.js': '.mjs' },
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
  for (const { env, name } of BUNDLED) process.env[env] = join(dir, `${name}.mjs`)
  return async () => {
    for (const { env } of BUNDLED) delete process.env[env]
    await rm(dir, { recursive: true, force: true })
  }
}
