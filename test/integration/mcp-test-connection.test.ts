import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { McpProfileInput, McpTestResult } from '../../shared/mcp'
import { freePort, openHost, removeDir, tempDir } from '../helpers'
import { processesWithEnv, TEST_RUN_ENV } from '../leak-check'
import { startTinyHttpServer, tinyServerCommand, TINY_SERVER_NAME, type TinyHttpServer } from '../mcp/tiny-server'

/** "Test connection" against a real MCP server (test/mcp/tiny-server.ts) over stdio, Streamable HTTP and SSE. */

let root: string
let host: Host
let http: TinyHttpServer
let secured: TinyHttpServer

beforeAll(async () => {
  root = await tempDir('mcp-test-connection')
  host = await openHost(root)
  http = await startTinyHttpServer()
  secured = await startTinyHttpServer({ token: 'letmein' })
})

afterAll(async () => {
  await host?.close()
  await http?.close()
  await secured?.close()
  await removeDir(root)
})

/** A long deadline unless a test is about the deadline: the tiny server is TypeScript through tsx, slow to start on a busy machine. */
async function test(input: McpProfileInput, timeoutMs = 90_000): Promise<McpTestResult> {
  const profile = await host.request('mcp.save', input)
  try {
    return await host.request('mcp.test', { id: profile.id, timeoutMs })
  } finally {
    await host.request('mcp.delete', { id: profile.id })
  }
}

const tiny = tinyServerCommand()

/** This test run's processes whose command line holds `text` (see test/leak-check.ts). */
function runningWith(text: string): string[] {
  return processesWithEnv(TEST_RUN_ENV, process.env[TEST_RUN_ENV] ?? '')
    .map((p) => p.commandLine)
    .filter((line) => line.includes(text))
}

describe('test connection', () => {
  it('starts a stdio server with its env (a secret included) and lists its tools, prompts and resources', async () => {
    const result = await test({
      name: 'tiny',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [
        { name: 'TINY_GREETING', value: 'bonjour' },
        { name: 'TINY_REQUIRE_TOKEN', value: 'abc' },
        { name: 'TINY_TOKEN', value: 'abc', secret: true }
      ]
    })
    expect(result).toMatchObject({
      ok: true,
      server: { name: TINY_SERVER_NAME, version: '0.1.0' },
      tools: [{ name: 'echo', description: 'Echoes its text back' }],
      prompts: [{ name: 'greet', description: 'Says bonjour' }],
      resources: [{ name: 'readme', description: 'About this server', uri: 'tiny://readme' }],
      notOffered: []
    })
  })

  it('finds a bare command on PATH', async () => {
    const result = await test({ name: 'tiny', transport: 'stdio', command: 'node', args: tiny.args })
    expect(result.ok).toBe(true)
  })

  it('reports the exit code and the end of stderr when the server dies before answering', async () => {
    const result = await test({
      name: 'tiny',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'abc' }]
    })
    expect(result).toMatchObject({
      ok: false,
      error: 'The server exited with code 2 before it answered.',
      exitCode: 2,
      stderrTail: 'tiny-mcp: TINY_TOKEN is missing or wrong'
    })
  })

  it('says when the command is not found', async () => {
    const result = await test({ name: 'ghost', transport: 'stdio', command: 'no-such-mcp-server-here' })
    expect(result).toMatchObject({
      ok: false,
      error: "The command 'no-such-mcp-server-here' was not found (it is not on PATH). Install it, or give its absolute path."
    })
  })

  it.skipIf(process.platform !== 'linux')('times out on a process that never speaks MCP, and the process is gone when the answer comes', async () => {
    // Found by its command line among this run's processes (a pid file could still be unwritten under load).
    const script = 'setInterval(() => {}, 1000) // mute-server-9f3c'
    const result = await test({ name: 'mute', transport: 'stdio', command: 'node', args: ['-e', script] }, 3000)
    expect(result).toMatchObject({
      ok: false,
      timedOut: true,
      error: 'No answer within 3 s: the server started but did not complete the MCP handshake.'
    })
    expect(runningWith('mute-server-9f3c')).toEqual([])
  })

  it.skipIf(process.platform !== 'linux')('stops what a mute server started, too', async () => {
    const result = await test({ name: 'mute', transport: 'stdio', command: 'sh', args: ['-c', 'sleep 613.25 & wait # mute-parent-9f3c'] }, 3000)
    expect(result).toMatchObject({ ok: false, timedOut: true })
    expect(runningWith('mute-parent-9f3c')).toEqual([])
    expect(runningWith('sleep 613.25')).toEqual([])
  })

  it('connects over Streamable HTTP on 127.0.0.1, sending the profile’s headers', async () => {
    const result = await test({ name: 'remote', transport: 'http', url: http.url, headers: [{ name: 'X-Trace', value: 'on' }] })
    expect(result).toMatchObject({ ok: true, server: { name: TINY_SERVER_NAME }, tools: [{ name: 'echo' }] })
    expect(http.requests.some((r) => r.headers['x-trace'] === 'on')).toBe(true)
  })

  it('connects over SSE', async () => {
    const result = await test({ name: 'old', transport: 'sse', url: http.sseUrl })
    expect(result).toMatchObject({ ok: true, prompts: [{ name: 'greet' }] })
  })

  it('shows the HTTP status when the server refuses, and connects once the secret header is right', async () => {
    const refused = await test({
      name: 'locked',
      transport: 'http',
      url: secured.url,
      headers: [{ name: 'Authorization', value: 'Bearer wrong', secret: true }]
    })
    expect(refused).toMatchObject({ ok: false, httpStatus: 401 })
    expect(refused.ok === false && refused.error).toMatch(/^The server answered HTTP 401 Unauthorized/)
    const allowed = await test({
      name: 'locked',
      transport: 'http',
      url: secured.url,
      headers: [{ name: 'Authorization', value: 'Bearer letmein', secret: true }]
    })
    expect(allowed.ok).toBe(true)
  })

  it('says when nothing listens at the address', async () => {
    const port = await freePort()
    const result = await test({ name: 'nobody', transport: 'http', url: `http://127.0.0.1:${port}/mcp` })
    expect(result).toMatchObject({ ok: false, error: 'Connection refused: nothing is listening at that address and port.' })
  })
})
