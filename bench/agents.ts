import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk'
import { scriptedAgentCommand } from '../test/agent/spawn'
import { now, until } from './lib'

/** The clients that read the same scripted agent's stream: the bare SDK (the pipe's limit) and a peer (acpx). */

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The scripted agent as fast as it goes: no delay between chunks, and sessions
 * kept in memory (with a state folder it appends each update to its session's
 * tail file before sending it: a write a chunk). `stateDir` is only used when a
 * benchmark needs sessions that survive a restart or a fork.
 */
export function agentEnv(stateDir: string | null, extra: Record<string, string> = {}): Record<string, string> {
  return { ...(stateDir ? { SCRIPTED_AGENT_STATE_DIR: stateDir } : {}), SCRIPTED_AGENT_CHUNK_DELAY_MS: '0', ...extra }
}

/** First-to-last chunk rate, chunks per second. */
export function rate(chunks: number, first: number, last: number): number {
  return ((chunks - 1) / Math.max(last - first, 0.001)) * 1000
}

/** A bare SDK client: spawn, initialize, session/new, prompt `/stream N`, count chunks. */
export async function bareSdkStream(chunks: number, cwd: string): Promise<number> {
  const { command, args } = scriptedAgentCommand()
  const child = spawn(command, args, { env: { ...process.env, ...agentEnv(null) }, stdio: ['pipe', 'pipe', 'inherit'] })
  let seen = 0
  let first = 0
  let last = 0
  const app = client({ name: 'bench-bare-sdk' }).onNotification(methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate !== 'agent_message_chunk') return
    const t = now()
    if (seen === 0) first = t
    last = t
    seen++
  })
  const connection = app.connect(
    ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)
  )
  try {
    await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} })
    const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })
    await connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: `/stream ${chunks}` }] })
    await until(() => seen >= chunks, 'the bare SDK client to see every chunk')
    return rate(chunks, first, last)
  } finally {
    connection.close()
    child.kill()
  }
}

export const ACPX_VERSION = '0.19.1'

/**
 * acpx, the headless ACP client on npm, installed on first use into
 * bench/.peers (not a dependency of the project: its lock entries do not
 * install cleanly with `npm ci` here, and only the benchmark needs it).
 */
export async function ensureAcpx(): Promise<string> {
  const prefix = join(repoRoot, 'bench', '.peers')
  const cli = join(prefix, 'node_modules', 'acpx', 'dist', 'cli.js')
  if (existsSync(cli)) return cli
  await mkdir(prefix, { recursive: true })
  await new Promise<void>((resolve, reject) => {
    const npm = spawn('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `acpx@${ACPX_VERSION}`], {
      stdio: ['ignore', 'ignore', 'inherit']
    })
    npm.on('error', reject)
    npm.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`npm install acpx@${ACPX_VERSION} failed (${code})`))))
  })
  return cli
}

/** acpx reading the same agent, its JSON output timestamped line by line. */
export async function acpxStream(chunks: number, cwd: string, home: string): Promise<number> {
  const cli = await ensureAcpx()
  const { command, args } = scriptedAgentCommand()
  const agent = [command, ...args].map((p) => (/\s/.test(p) ? JSON.stringify(p) : p)).join(' ')
  const child = spawn(process.execPath, [cli, '--agent', agent, '--cwd', cwd, '--format', 'json', '--approve-all', 'exec', `/stream ${chunks}`], {
    env: { ...process.env, ...agentEnv(null), HOME: home },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)))
  let seen = 0
  let first = 0
  let last = 0
  const lines = createInterface({ input: child.stdout })
  lines.on('line', (line) => {
    if (!line.includes('"agent_message_chunk"')) return
    const t = now()
    if (seen === 0) first = t
    last = t
    seen++
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  if (seen < chunks) throw new Error(`acpx saw ${seen} of ${chunks} chunks (exit ${code}): ${stderr}`)
  return rate(chunks, first, last)
}
