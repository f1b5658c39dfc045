import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Host } from '../../electron/host/host'
import { startFakeOpenAI, type FakeOpenAI } from './fake-openai'
import { offlinePerTest, type OfflineRun } from './offline'

/**
 * Real Codex for the integration tests (`@agentclientprotocol/codex-acp`,
 * which runs the Codex app-server of its `@openai/codex` dependency), offline
 * against test/real/fake-openai.ts, as real-codex.test.ts and
 * real-codex-mcp.test.ts run it.
 *
 * Codex is pointed at the fake by its config.toml (in CODEX_HOME, a temporary
 * folder): a provider of its own whose key comes from an environment variable
 * (codex-acp asks for a sign-in only for the built-in `openai` provider), one
 * attempt per model request, no update checks, analytics or feedback. Nothing
 * in it says when to ask (no `approval_policy`): Switchboard puts a new
 * session in "read-only".
 *
 * codex-acp keeps its app-server's stderr to itself (RUST_LOG, default
 * `info`, reaches the app-server; its last lines go into an error when it
 * exits). To see the app-server's wire (every JSON-RPC message, such as
 * `mcpServer/startupStatus/updated`), run a test with APP_SERVER_LOGS=<folder>:
 * codex-acp writes it to <folder>/app-server.log.
 */

const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules')
/** The adapter's entry point, run with this Node. */
export const codexAdapter = join(modules, '@agentclientprotocol', 'codex-acp', 'dist', 'index.js')

/**
 * Fails, saying why, when codex-acp is not installed: it is a devDependency, so
 * a missing adapter is a broken install, which a skipped test would hide.
 */
export function requireCodexAdapter(): void {
  if (!existsSync(codexAdapter)) {
    throw new Error(`codex-acp is missing (${codexAdapter}): it is a devDependency (@agentclientprotocol/codex-acp); run 'npm ci' to install it`)
  }
}

/**
 * Codex's config.toml pointed at the fake. The model is one Codex 0.166 knows: for a name it does not
 * (`gpt-5.4`), it streams "Warning: Model metadata for `gpt-5.4` not found…" into the reply as agent text.
 */
export function codexConfig(url: string): string {
  return `model = "gpt-6.1-sol"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.fake]
name = "Fake OpenAI"
base_url = "${url}/v1"
env_key = "FAKE_OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
}

/** The folders of one test's Codex: its HOME, with CODEX_HOME in it. */
export interface CodexHome {
  home: string
  codexHome: string
}

/** Makes `<root>/home/.codex` with the config.toml pointed at the fake at `url`. */
export async function makeCodexHome(root: string, url: string): Promise<CodexHome> {
  const home = join(root, 'home')
  const codexHome = join(home, '.codex')
  await mkdir(codexHome, { recursive: true })
  await writeFile(join(codexHome, 'config.toml'), codexConfig(url))
  return { home, codexHome }
}

/** Adds Codex (named "Codex") pointed at the fake to the Host: its id. */
export async function addCodexAgent(host: Host, { home, codexHome }: CodexHome): Promise<string> {
  const agent = await host.request('agents.add', {
    name: 'Codex',
    transport: {
      kind: 'process',
      command: process.execPath,
      args: [codexAdapter],
      env: {
        HOME: home,
        USERPROFILE: home,
        CODEX_HOME: codexHome,
        FAKE_OPENAI_API_KEY: 'fake-openai-key',
        RUST_LOG: process.env['RUST_LOG'] ?? 'info',
        ...(process.env['APP_SERVER_LOGS'] ? { APP_SERVER_LOGS: process.env['APP_SERVER_LOGS'] } : {})
      }
    }
  })
  return agent.id
}

/** What one test's offline Codex runs on (see offlineCodexPerTest). */
export interface OfflineCodex extends OfflineRun<FakeOpenAI> {
  codex: CodexHome
}

/**
 * The real-Codex suites' set-up, per test (offlinePerTest in ./offline.ts): a
 * temporary folder with a project, the fake Responses API, a Codex home
 * pointed at it and a Host; after each test nothing with that HOME may run and
 * no unknown API call may have been made.
 */
export function offlineCodexPerTest(): OfflineCodex {
  return offlinePerTest({
    prefix: 'codex',
    check: requireCodexAdapter,
    startApi: startFakeOpenAI,
    prepare: async (root, api) => ({ codex: await makeCodexHome(root, api.url) }),
    homeOf: ({ codex }) => codex.home,
    unknownOf: (api) => api.unknown.map((r) => `${r.method} ${r.path}`)
  })
}
