import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, processesWithEnv, removeDir, tempDir, waitUntil } from '../helpers'
import { tinyServerCommand } from '../mcp/tiny-server'
import { startFakeOpenAI, type FakeOpenAI } from '../real/fake-openai'

/**
 * Real Codex (`@zed-industries/codex-acp`, offline against test/real/fake-openai.ts,
 * set up as in real-codex.test.ts) given two MCP servers, one of which exits at
 * start. Codex says nothing of them over ACP; its log (stderr) has each one's
 * startup, ready or failed with why, and the session shows that.
 */

const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules')
const codexBinary = join(
  modules,
  '@zed-industries',
  `codex-acp-${process.platform}-${process.arch}`,
  'bin',
  process.platform === 'win32' ? 'codex-acp.exe' : 'codex-acp'
)

let root: string
let home: string
let codexHome: string
let project: string
let dataDir: string
let host: Host
let api: FakeOpenAI

/**
 * Codex's config.toml pointed at the fake. The model is one Codex knows: for a name it does not
 * (`fake-model`), it streams "Model metadata for `fake-model` not found…" into the reply as agent text
 * and offers the model no `apply_patch` tool.
 */
function config(url: string): string {
  return `model = "gpt-5.4"
model_provider = "fake"
approval_policy = "untrusted"
sandbox_mode = "danger-full-access"
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

beforeEach(async () => {
  root = await tempDir('codex')
  home = join(root, 'home')
  codexHome = join(home, '.codex')
  project = join(root, 'project')
  dataDir = join(root, 'data')
  await mkdir(codexHome, { recursive: true })
  await mkdir(project)
  api = await startFakeOpenAI()
  await writeFile(join(codexHome, 'config.toml'), config(api.url))
  host = await openHost(dataDir)
})

afterEach(async () => {
  try {
    await host.close()
    await api.close()
    // Everything Codex started had HOME set to our folder: none of it may remain.
    expect(processesWithEnv(`HOME=${home}`)).toEqual([])
    // Codex called nothing of the API the fake does not serve.
    expect(api.unknown.map((r) => `${r.method} ${r.path}`)).toEqual([])
  } finally {
    await removeDir(root)
  }
})

/** Codex pointed at the fake, and the project. */
async function addCodex(): Promise<{ agentId: string; projectId: string }> {
  const agent = await host.request('agents.add', {
    name: 'Codex',
    command: codexBinary,
    args: [],
    env: {
      HOME: home,
      USERPROFILE: home,
      CODEX_HOME: codexHome,
      FAKE_OPENAI_API_KEY: 'fake-openai-key',
      RUST_LOG: process.env['RUST_LOG'] ?? 'info'
    }
  })
  const projectId = (await host.request('projects.add', { cwd: project })).id
  return { agentId: agent.id, projectId }
}

const mcpRunOf = async (id: string) => (await host.request('sessions.states', {})).find((s) => s.id === id)?.mcpRun

describe.skipIf(!existsSync(codexBinary))('real Codex and MCP servers, one of which exits at start', () => {
  it('its log says which started and which failed (with why): the session shows both', async () => {
    const { agentId, projectId } = await addCodex()
    const tiny = tinyServerCommand()
    await host.request('mcp.save', { name: 'tiny', transport: 'stdio', command: tiny.command, args: tiny.args, env: [] })
    await host.request('mcp.save', {
      name: 'crashy',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'wanted' }]
    })
    const id = (await host.request('sessions.new', { projectId, agentId })).id
    // Codex starts its servers before the first model request; its log is read as the session's records come.
    expect(await host.request('sessions.prompt', { id, text: 'hello' })).toEqual({ stopReason: 'end_turn' })
    await waitUntil('both servers reported', async () => (await mcpRunOf(id))?.servers.every((s) => s.state !== 'not_reported'))
    expect((await mcpRunOf(id))?.servers).toEqual([
      { name: 'tiny', state: 'started', reason: 'the agent’s log says it is ready' },
      {
        name: 'crashy',
        state: 'failed',
        reason: expect.stringMatching(/^the agent’s log says it failed: MCP client for `crashy` failed to start: .*connection closed/)
      }
    ])
    // The model was offered the tool of the one that started only.
    const offered = JSON.stringify(api.responses().at(-1)?.body.tools ?? [])
    expect(offered).toContain('mcp__tiny')
    expect(offered).not.toContain('crashy')
  }, 120_000)
})
