import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { markPrefixFor, PROCESS_MARK_ENV } from '../../electron/host/child-processes/process-tree'
import { SERVE_STATE_FILE, startServing, type Serving } from '../../electron/host/web/serving'
import { TEST_RUN_ENV } from '../leak-check'
import { tinyServerCommand } from '../mcp/tiny-server'
import { allowCommands, confirmEverything, entriesOf, fold, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import type { z } from 'zod'
import type { RequestMethod, RequestResult } from '../../shared/contract'
import type { requestParams } from '../../shared/request-params'

/**
 * What a program Switchboard starts finds in its environment: the user's, its
 * own variables and secrets, and nothing of Switchboard's own but the process
 * mark. Here `serve` runs (so a token exists) with, in its own environment,
 * variables of the user's and what Switchboard and Electron put there for
 * themselves; two agents, each with a variable and a secret, each in its own
 * project with its own MCP server holding a secret. Each program reports its
 * whole environment: the agents (`/environ`), a terminal an agent starts, an
 * MCP server started by its agent (as agents do: their environment plus the
 * server's variables) and by Test connection (TINY_ENV_FILE).
 */

/** Different on every run: a value found anywhere came from this run. */
const tag = Math.random().toString(36).slice(2, 10)
const USER_VAR = `from the user ${tag}`
const SECRETS = {
  agentA: `agent-a-secret-${tag}`,
  agentB: `agent-b-secret-${tag}`,
  mcpA: `mcp-a-secret-${tag}`,
  mcpB: `mcp-b-secret-${tag}`
}

/** Set in the Host's environment before it opens: the user's variable, and Switchboard's and Electron's own. */
const HOST_ENV: Record<string, string> = {
  ISOLATION_USER_VAR: USER_VAR,
  // `SWITCHBOARD_DATA_DIR=… npm run serve`; a Switchboard run inside a terminal would take the same folder.
  SWITCHBOARD_DATA_DIR: `/nonexistent/switchboard-data-${tag}`,
  SWITCHBOARD_LOGIN_SHELL_ENV: '0',
  // serve run by Electron's binary as Node: an Electron program started by an agent would run as Node too.
  ELECTRON_RUN_AS_NODE: '1',
  ELECTRON_NO_ATTACH_CONSOLE: '1',
  // The user's own, for installing Electron: kept.
  ELECTRON_MIRROR: `https://mirror.example/electron-${tag}/`,
  // Electron names Switchboard's .desktop file here, and replaces the desktop's name (keeping the user's).
  CHROME_DESKTOP: 'switchboard.desktop',
  XDG_CURRENT_DESKTOP: 'Unity',
  ORIGINAL_XDG_CURRENT_DESKTOP: 'ubuntu:GNOME'
}

/** Electron's own, of those above. */
const ELECTRONS_OWN = ['ELECTRON_RUN_AS_NODE', 'ELECTRON_NO_ATTACH_CONSOLE', 'CHROME_DESKTOP', 'ORIGINAL_XDG_CURRENT_DESKTOP']

let root: string
let dataDir: string
let serving: Serving
let host: Host
let token: string
const saved: Record<string, string | undefined> = {}
const sessions = { a: '', b: '' }

/** The test's own setup, in process: confirmed as the user would on serve's console (what serve asks is tested in serve-confirm). */
async function confirmed<M extends RequestMethod>(method: M, params: z.input<(typeof requestParams)[M]>): Promise<RequestResult<M>> {
  const response = await host.handle(method, params, { confirmCommand: confirmEverything })
  if (!response.ok) throw new Error(response.error.message)
  return response.result as RequestResult<M>
}

beforeAll(async () => {
  root = await tempDir('isolation')
  dataDir = join(root, 'data')
  const rendererDir = join(root, 'renderer')
  await mkdir(rendererDir)
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><html lang="en"><head><title>Switchboard</title></head><body></body></html>')
  for (const [name, value] of Object.entries(HOST_ENV)) {
    saved[name] = process.env[name]
    process.env[name] = value
  }
  serving = await startServing({ dataDir, rendererDir, version: 'test', host: { presets: [], initializeTimeoutMs: 20_000 } })
  host = serving.host
  token = (JSON.parse(await readFile(join(dataDir, SERVE_STATE_FILE), 'utf8')) as { token: string }).token

  const tiny = tinyServerCommand()
  // B first: whatever starting B put anywhere, A (started after it) would find.
  for (const side of ['b', 'a'] as const) {
    const upper = side.toUpperCase()
    const cwd = join(root, `project-${side}`)
    await mkdir(cwd)
    const project = await confirmed('projects.add', { cwd })
    await confirmed('mcp.save', {
      name: `tiny-${side}`,
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      scope: 'projects',
      projectIds: [project.id],
      env: [
        { name: `MCP_${upper}_SECRET`, value: side === 'a' ? SECRETS.mcpA : SECRETS.mcpB, secret: true },
        { name: 'TINY_ENV_FILE', value: join(root, `mcp-${side}.json`) }
      ]
    })
    const agent = await confirmed(
      'agents.add',
      scriptedAgent(join(root, `state-${side}`), { [`AGENT_${upper}_SETTING`]: `setting of ${side}` }, `Agent ${upper}`, {
        secretEnv: { [`AGENT_${upper}_SECRET`]: side === 'a' ? SECRETS.agentA : SECRETS.agentB }
      })
    )
    sessions[side] = (await host.request('sessions.new', { projectId: project.id, agentId: agent.id })).id
  }
}, 120_000)

afterAll(async () => {
  await serving?.close()
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  await removeDir(root)
})

async function reply(sessionId: string, text: string): Promise<string> {
  await host.request('sessions.prompt', { id: sessionId, text })
  const thread = fold((await host.request('sessions.open', { id: sessionId })).records)
  return (entriesOf(thread, 'assistant').at(-1) as { text: string }).text
}

/** The MCP server's environment, from the file it writes at start. */
async function serverEnv(side: 'a' | 'b', start: () => Promise<unknown>): Promise<Record<string, string>> {
  const file = join(root, `mcp-${side}.json`)
  await rm(file, { force: true })
  await start()
  await waitUntil(`${file} to be written`, () => existsSync(file))
  return JSON.parse(await readFile(file, 'utf8')) as Record<string, string>
}

/** Names of the variables whose value holds `text`. */
const holding = (env: Record<string, string>, text: string): string[] => Object.keys(env).filter((name) => env[name].includes(text))

/**
 * The environment is the user's plus `own`, and holds none of `foreign` (other
 * programs' secrets), nor the serve token, nor Switchboard's or Electron's own
 * variables beyond the process mark (and the test run's mark, the leak check's).
 */
function expectIsolated(env: Record<string, string>, own: Record<string, string>, foreign: string[]): void {
  expect(env).toMatchObject({ ISOLATION_USER_VAR: USER_VAR, ELECTRON_MIRROR: HOST_ENV.ELECTRON_MIRROR, ...own })
  for (const secret of foreign) expect(holding(env, secret), `a variable holds ${secret}`).toEqual([])
  expect(holding(env, token), 'a variable holds the serve token').toEqual([])
  const switchboards = Object.keys(env).filter((n) => n.startsWith('SWITCHBOARD_') || ELECTRONS_OWN.includes(n))
  expect(switchboards.sort()).toEqual([PROCESS_MARK_ENV, ...(process.env[TEST_RUN_ENV] ? [TEST_RUN_ENV] : [])].sort())
  expect(env[PROCESS_MARK_ENV].startsWith(markPrefixFor(dataDir))).toBe(true)
  // Electron's replacement undone: the desktop the user is in.
  expect(env.XDG_CURRENT_DESKTOP).toBe('ubuntu:GNOME')
}

describe.skipIf(process.platform === 'win32')('what the programs Switchboard starts find in their environment', () => {
  it('each agent: the user’s environment, its own variables and secrets; nothing of the other agent’s, of MCP servers, or of Switchboard', async () => {
    const a = JSON.parse((await reply(sessions.a, '/environ')).replace(/^environ=/, '')) as Record<string, string>
    expectIsolated(a, { AGENT_A_SETTING: 'setting of a', AGENT_A_SECRET: SECRETS.agentA }, [SECRETS.agentB, SECRETS.mcpA, SECRETS.mcpB])
    expect(a.AGENT_B_SETTING).toBeUndefined()
    const b = JSON.parse((await reply(sessions.b, '/environ')).replace(/^environ=/, '')) as Record<string, string>
    expectIsolated(b, { AGENT_B_SETTING: 'setting of b', AGENT_B_SECRET: SECRETS.agentB }, [SECRETS.agentA, SECRETS.mcpA, SECRETS.mcpB])
    expect(b.AGENT_A_SETTING).toBeUndefined()
  })

  it('a terminal an agent starts: the user’s environment, the agent’s variables and the request’s; not the agent’s secrets', async () => {
    const node = `'${process.execPath.replace(/'/g, `'\\''`)}'`
    allowCommands(host)
    const text = await reply(sessions.a, `/terminal-env ISOLATION_REQUEST_VAR=asked ${node} -e 'process.stdout.write(JSON.stringify(process.env))'`)
    const output = /^exit=0 signal=none truncated=false output=(.*)$/s.exec(text)
    expect(output, text).not.toBeNull()
    const env = JSON.parse(JSON.parse(output![1]) as string) as Record<string, string>
    expectIsolated(env, { AGENT_A_SETTING: 'setting of a', ISOLATION_REQUEST_VAR: 'asked' }, [
      SECRETS.agentA,
      SECRETS.agentB,
      SECRETS.mcpA,
      SECRETS.mcpB
    ])
  })

  it('an agent is given only the MCP servers of its own session, and a server it starts gets its own secret, not another’s', async () => {
    const given = await reply(sessions.a, '/mcp')
    expect(given).toContain(SECRETS.mcpA)
    expect(given).not.toContain(SECRETS.mcpB)
    expect(given).not.toContain('tiny-b')
    // The agent starts it (its own environment plus the server's variables): the agent's secret is there by the agent's doing.
    const env = await serverEnv('a', async () =>
      expect(await reply(sessions.a, '/mcp-connect tiny-a')).toBe('mcp-connect tiny-a: tiny-mcp with tools echo')
    )
    expectIsolated(env, { MCP_A_SECRET: SECRETS.mcpA, AGENT_A_SECRET: SECRETS.agentA }, [SECRETS.agentB, SECRETS.mcpB])
    expect(await reply(sessions.a, '/mcp-connect tiny-b')).toBe("mcp-connect failed: no stdio MCP server 'tiny-b' in this session")
  }, 120_000)

  it('an MCP server under Test connection: the user’s environment and its own variables and secrets, no agent’s', async () => {
    const { profiles } = await host.request('mcp.list', {})
    for (const side of ['a', 'b'] as const) {
      const profile = profiles.find((p) => p.name === `tiny-${side}`)!
      const env = await serverEnv(side, async () =>
        expect(await host.request('mcp.test', { id: profile.id, timeoutMs: 90_000 })).toMatchObject({ ok: true })
      )
      const own: Record<string, string> = side === 'a' ? { MCP_A_SECRET: SECRETS.mcpA } : { MCP_B_SECRET: SECRETS.mcpB }
      const foreign = side === 'a' ? SECRETS.mcpB : SECRETS.mcpA
      expectIsolated(env, own, [SECRETS.agentA, SECRETS.agentB, foreign])
    }
  }, 200_000)
})
