import { execFileSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { RequestParams } from '../../shared/contract'
import { startNetworkAgent, type NetworkAgent } from '../agent/network-agent'
import { confirmEverything, sessionMethodsReceived, entriesOf, fold, openHost, removeDir, tempDir, waitUntil } from '../helpers'
import { Host as HostClass } from '../../electron/host/host'

/**
 * Agents over the network: the scripted agent behind the SDK's server
 * transports on 127.0.0.1 (WebSocket and Streamable HTTP), reached by the
 * Host with the SDK's client transports, its token kept as a secret.
 */

const TOKEN = 'tok-7f3a9c'
let root: string
let dataDir: string
let projectDir: string
let stateDir: string
const hosts: Host[] = []
const servers: NetworkAgent[] = []

beforeEach(async () => {
  root = await tempDir('network')
  dataDir = join(root, 'data')
  projectDir = join(root, 'project')
  stateDir = join(root, 'agent-state')
  await mkdir(projectDir, { recursive: true })
})

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()))
  await Promise.all(servers.splice(0).map((s) => s.close()))
  await removeDir(root)
})

async function startHost(): Promise<Host> {
  const host = await openHost(dataDir)
  hosts.push(host)
  return host
}

async function serve(options: Parameters<typeof startNetworkAgent>[0] = {}): Promise<NetworkAgent> {
  const server = await startNetworkAgent({ token: TOKEN, env: { SCRIPTED_AGENT_STATE_DIR: stateDir }, ...options })
  servers.push(server)
  return server
}

function remoteAgent(url: string, token = TOKEN, caFile?: string): RequestParams<'agents.add'> {
  return { name: 'Remote', transport: { kind: 'network', url, headers: { Authorization: `Bearer ${token}` }, caFile } }
}

const transports = [
  { name: 'WebSocket', url: (s: NetworkAgent) => s.wsUrl },
  { name: 'Streamable HTTP', url: (s: NetworkAgent) => s.httpUrl }
]

describe.each(transports)('an agent over $name', ({ url }) => {
  it('runs a whole session: streamed reply, file requests answered, continued after a restart; the token is never in db.json', async () => {
    const server = await serve()
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', remoteAgent(url(server)))
    expect(agent.transport).toEqual({ kind: 'network', url: url(server), secretHeaders: ['Authorization'] })
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    expect(record.acpSessionId).toMatch(/^sess-/)

    await writeFile(join(projectDir, 'notes.txt'), 'read over the network')
    const result = await host.request('sessions.prompt', { id: record.id, text: `/stream 5\n/read ${join(projectDir, 'notes.txt')}` })
    expect(result.stopReason).toBe('end_turn')
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect((entriesOf(thread, 'assistant')[0] as { text: string }).text).toBe('chunk 1 chunk 2 chunk 3 chunk 4 chunk 5 ')
    expect(JSON.stringify(thread.entries)).toContain('read 21 chars')
    const state = (await host.request('agents.states', {})).find((s) => s.agentId === agent.id)
    expect(state).toMatchObject({ status: 'ready', agentInfo: { name: 'scripted-agent' } })
    expect(state?.capabilities?.loadSession).toBe(true)

    // A new connection (the agent restarted) continues the session through session/load.
    await host.request('agents.restart', { agentId: agent.id })
    const second = await host.request('sessions.prompt', { id: record.id, text: 'hello again' })
    expect(second.stopReason).toBe('end_turn')
    const after = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(after, 'user').map((e) => (e as { text: string }).text)).toEqual([
      `/stream 5\n/read ${join(projectDir, 'notes.txt')}`,
      'hello again'
    ])
    expect(server.connections).toBe(2)

    await host.close()
    const db = await readFile(join(dataDir, 'db.json'), 'utf8')
    expect(db).toContain(url(server))
    expect(db).not.toContain(TOKEN)
  })

  it('refuses a wrong token with a clear error, not a hang', async () => {
    const server = await serve()
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', remoteAgent(url(server), 'not-the-token'))
    const failure = await host.request('sessions.new', { projectId: project.id, agentId: agent.id }).then(
      () => null,
      (error: Error) => error
    )
    expect(failure?.message).toMatch(/refused the connection \(HTTP 401 Unauthorized\): check the agent's token or headers/)
    expect(failure?.message).toContain(url(server))
    expect(server.refused).toBeGreaterThan(0)
    expect(server.connections).toBe(0)
    const state = (await host.request('agents.states', {})).find((s) => s.agentId === agent.id)
    expect(state?.status).toMatch(/error|exited/)
    expect(state?.message).toMatch(/HTTP 401/)
  })
})

describe.each([
  { name: 'WebSocket', url: (s: NetworkAgent) => s.wsUrl, sessions: '', reopened: 'session/load' },
  { name: 'Streamable HTTP', url: (s: NetworkAgent) => s.httpUrl, sessions: 'resume', reopened: 'session/resume' }
])('a connection over $name dropped mid-stream', ({ url, sessions, reopened }) => {
  it(`is noticed and reported in the session, which reconnects through ${reopened} and goes on`, async () => {
    const server = await serve({
      env: { SCRIPTED_AGENT_STATE_DIR: stateDir, SCRIPTED_AGENT_CHUNK_DELAY_MS: '25', SCRIPTED_AGENT_SESSIONS: sessions }
    })
    const host = await HostClass.open({
      dataDir,
      version: 'test',
      presets: [],
      initializeTimeoutMs: 20_000,
      confirmCommand: confirmEverything,
      reconnectDelaysMs: [200, 500, 1000]
    })
    hosts.push(host)
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', remoteAgent(url(server)))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    const turn = host.request('sessions.prompt', { id: record.id, text: '/stream 400' }).then(
      () => null,
      (error: Error) => error
    )
    // Mid-stream: some chunks have come, most have not.
    await waitUntil('some chunks streamed', async () => {
      const thread = fold((await host.request('sessions.open', { id: record.id })).records)
      return (entriesOf(thread, 'assistant')[0] as { text: string } | undefined)?.text.includes('chunk 5 ')
    })
    server.drop()

    const failure = await turn
    expect(failure?.message).toMatch(new RegExp(`The connection to agent 'Remote' at ${url(server).replace(/[/.]/g, '\\$&')} was lost`))
    // Back on a new connection without the user doing anything.
    // Polled as the whole state, so a failure shows what the session said instead (its error names the failed attempt).
    await expect
      .poll(async () => (await host.request('sessions.states', {})).find((s) => s.id === record.id), { timeout: 60_000 })
      .toMatchObject({ status: 'ready' })
    expect(server.connections).toBe(2)
    expect(await sessionMethodsReceived(stateDir)).toEqual(['session/new', reopened])

    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    // Said in the thread after whatever the reopening replayed.
    expect(thread.entries.at(-1)).toMatchObject({ kind: 'notice', severity: 'warning', title: 'Reconnected to Remote' })
    expect((thread.entries.at(-1) as { description: string }).description).toMatch(
      /^The connection to agent 'Remote' at .* was lost: .*Switchboard connected again and reopened this conversation/
    )
    const streamed = (entriesOf(thread, 'assistant')[0] as { text: string }).text
    expect(streamed).toContain('chunk 5 ')
    expect(streamed).not.toContain('chunk 400 ')

    const after = await host.request('sessions.prompt', { id: record.id, text: 'still there?' })
    expect(after.stopReason).toBe('end_turn')
    const final = fold((await host.request('sessions.open', { id: record.id })).records)
    expect((entriesOf(final, 'assistant').at(-1) as { text: string }).text).toBe('You said: still there?')
    expect(server.connections).toBe(2)
  })

  it('keeps trying while the agent is unreachable, says so, and gives up after the last attempt', async () => {
    const server = await serve({ env: { SCRIPTED_AGENT_STATE_DIR: stateDir, SCRIPTED_AGENT_SESSIONS: sessions } })
    const host = await HostClass.open({
      dataDir,
      version: 'test',
      presets: [],
      initializeTimeoutMs: 20_000,
      confirmCommand: confirmEverything,
      reconnectDelaysMs: [300, 300]
    })
    hosts.push(host)
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', remoteAgent(url(server)))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await server.close()
    const errors: string[] = []
    host.events.subscribe((batch) => {
      for (const event of batch) {
        if (event.type === 'session.state' && event.payload.id === record.id && event.payload.error) errors.push(event.payload.error)
      }
    })
    await waitUntil('gave up', () => errors.some((e) => e.includes('Gave up reconnecting')), { timeoutMs: 60_000 })
    expect(errors.join('\n')).toMatch(/Reconnecting to Remote in 0.3 s \(attempt 2 of 3\)/)
    expect(errors.at(-1)).toMatch(/nothing is listening there \(connection refused\)\. Gave up reconnecting to Remote; send again to try once more\./)
  })
})

describe('TLS', () => {
  it('verifies the certificate: a self-signed server is refused, and trusted once its CA file is given', async () => {
    const key = join(root, 'key.pem')
    const cert = join(root, 'cert.pem')
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1'
      ],
      { stdio: 'ignore' }
    )
    const server = await serve({ tls: { key: await readFile(key, 'utf8'), cert: await readFile(cert, 'utf8') } })
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })

    for (const address of [server.wsUrl, server.httpUrl]) {
      const untrusted = await host.request('agents.add', { ...remoteAgent(address), name: `Untrusted ${address.slice(0, 5)}` })
      const refused = await host.request('sessions.new', { projectId: project.id, agentId: untrusted.id }).then(
        () => null,
        (error: Error) => error
      )
      expect(refused?.message).toMatch(/TLS certificate is not trusted \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/)

      const trusted = await host.request('agents.add', { ...remoteAgent(address, TOKEN, cert), name: `Trusted ${address.slice(0, 5)}` })
      expect(trusted.transport).toMatchObject({ kind: 'network', caFile: cert })
      const record = await host.request('sessions.new', { projectId: project.id, agentId: trusted.id })
      const result = await host.request('sessions.prompt', { id: record.id, text: 'over TLS' })
      expect(result.stopReason).toBe('end_turn')
    }
    expect(server.connections).toBe(2)
  })
})

describe('as for a local agent', () => {
  it('the capability check probes it on a connection of its own, leaving the one sessions use alone', async () => {
    const server = await serve({ env: { SCRIPTED_AGENT_STATE_DIR: stateDir, SCRIPTED_AGENT_SESSIONS: 'resume' } })
    const host = await startHost()
    const agent = await host.request('agents.add', remoteAgent(server.httpUrl))
    await host.request('agents.restart', { agentId: agent.id })
    const report = await host.request('agents.check', { agentId: agent.id })
    const outcome = (id: string): string | undefined => report.lines.find((l) => l.id === id)?.outcome
    expect(outcome('initialize')).toBe('worked')
    expect(outcome('session/new')).toBe('worked')
    expect(outcome('session/resume')).toBe('worked')
    expect(outcome('session/load')).toBe('worked')
    // Not announced: "not offered", not a failure (issue 36.7).
    expect(outcome('session/fork')).toBe('not offered')
    expect(server.connections).toBe(2)
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.status).toBe('ready')
  })
})

describe('sign-in', () => {
  it('offers no terminal sign-in to an agent over the network (it would run a command this computer does not have)', async () => {
    const server = await serve({ env: { SCRIPTED_AGENT_STATE_DIR: stateDir, SCRIPTED_AGENT_AUTH: '1' } })
    const host = await startHost()
    const agent = await host.request('agents.add', remoteAgent(server.wsUrl))
    const state = await host.request('agents.restart', { agentId: agent.id })
    const offered = (state.authMethods ?? []).map((m) => m.id)
    expect(offered).toContain('api-key')
    expect(offered).not.toContain('cli-login')
  })
})

describe('checking what is typed', () => {
  it('refuses addresses that are not ws(s) or http(s), credentials in the address, bad headers and unreadable CA files', async () => {
    const host = await startHost()
    const add = (remote: { url: string; headers?: Record<string, string | null>; caFile?: string }) =>
      host.request('agents.add', { name: 'Bad', transport: { kind: 'network', ...remote } }).then(
        () => '',
        (error: Error) => error.message
      )
    expect(await add({ url: 'ftp://example.com/acp', headers: {} })).toMatch(/must start with ws:\/\/, wss:\/\/, http:\/\/ or https:\/\//)
    expect(await add({ url: 'not a url', headers: {} })).toMatch(/must be a URL/)
    expect(await add({ url: 'wss://me:pw@example.com/acp', headers: {} })).toMatch(/credentials in a header/)
    expect(await add({ url: 'wss://example.com/acp', headers: { 'Bad Header': 'x' } })).toMatch(/not a valid HTTP header name/)
    expect(await add({ url: 'wss://example.com/acp', headers: {}, caFile: 'relative/ca.pem' })).toMatch(/absolute path/)
    expect(await add({ url: 'wss://example.com/acp', headers: {}, caFile: join(root, 'missing.pem') })).toMatch(/cannot be read \(ENOENT\)/)
    expect(await host.request('agents.list', {})).toEqual([])
  })
})

describe('secrets of a network agent', () => {
  const add = (host: Host, url: string, headers: Record<string, string> = {}) =>
    host.request('agents.add', { name: 'Net', transport: { kind: 'network', url, headers } }).then(
      (agent) => agent.id,
      (error: Error) => `refused: ${error.message}`
    )

  it('refuses a credential in the address (userinfo or query) without repeating it, and keeps none in db.json', async () => {
    const host = await startHost()
    const secrets = ['sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'hunter2-password', 'abc123']
    for (const url of [
      `wss://agents.example.com/acp?token=${secrets[2]}`,
      `wss://agents.example.com/acp?api_key=${secrets[2]}`,
      `https://agents.example.com/acp?Signature=${secrets[2]}&x=1`,
      `wss://agents.example.com/acp?x=${secrets[0]}`,
      `wss://me:${secrets[1]}@agents.example.com/acp`
    ]) {
      const answer = await add(host, url)
      expect(answer, url).toMatch(/^refused: .*(credentials in a header|looks like a credential in its query)/)
      for (const secret of secrets) expect(answer, url).not.toContain(secret)
    }
    expect(await host.request('agents.list', {})).toEqual([])
    // A plain query stays; a fragment (never sent) is not kept.
    expect(await add(host, 'wss://agents.example.com/acp?model=small#frag')).not.toMatch(/^refused/)
    expect((await host.request('agents.list', {}))[0].transport).toMatchObject({ kind: 'network', url: 'wss://agents.example.com/acp?model=small' })
    const db = await readFile(join(dataDir, 'db.json'), 'utf8')
    for (const secret of secrets) expect(db).not.toContain(secret)
  })

  it('asks before sending secret headers unencrypted to another computer, and saves nothing when not confirmed', async () => {
    const asked: string[] = []
    let answer = false
    const host = await HostClass.open({
      dataDir,
      version: 'test',
      presets: [],
      confirmCommand: async (change) => {
        asked.push(change.programs.map((p) => p.label).join('\n'))
        return answer ? { confirmed: true } : { confirmed: false, code: 'confirmation_refused', message: 'Not confirmed' }
      }
    })
    hosts.push(host)
    const token = { Authorization: `Bearer ${TOKEN}` }
    expect(await add(host, 'http://agents.example.com/acp', token)).toMatch(/^refused: Not confirmed/)
    expect(asked.at(-1)).toMatch(
      /UNENCRYPTED: its secret headers \(Authorization\) are sent in the clear over http:\/\/ to agents\.example\.com, .*else use https:\/\//
    )
    expect(await add(host, 'ws://10.0.0.7:8080/acp', token)).toMatch(/^refused: Not confirmed/)
    expect(asked.at(-1)).toMatch(/UNENCRYPTED: .* over ws:\/\/ to 10\.0\.0\.7:8080, .*else use wss:\/\//)
    expect(await host.request('agents.list', {})).toEqual([])
    const db = await readFile(join(dataDir, 'db.json'), 'utf8').catch(() => '')
    expect(db).not.toContain(TOKEN)

    // Encrypted, on this computer, or with no secret to send: the confirmation says nothing of it.
    answer = true
    for (const [url, headers] of [
      ['wss://agents.example.com/acp', token],
      ['ws://127.0.0.1:9/acp', token],
      ['http://localhost:9/acp', token],
      ['http://[::1]:9/acp', token],
      ['http://agents.example.com/plain', {}]
    ] as const) {
      expect(await add(host, url, headers), url).not.toMatch(/^refused/)
      expect(asked.at(-1), url).not.toMatch(/UNENCRYPTED/)
    }
    // Confirmed, it is saved (the user's choice).
    expect(await add(host, 'http://agents.example.com/acp', token)).not.toMatch(/^refused/)
    expect(asked.at(-1)).toMatch(/UNENCRYPTED/)
  })
})
