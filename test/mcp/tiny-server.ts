/**
 * A tiny real MCP server for tests, built on @modelcontextprotocol/sdk: one
 * tool (`echo`), one prompt (`greet`), one resource (`tiny://readme`).
 *
 * - As a subprocess over stdio: `node --import tsx test/mcp/tiny-server.ts`
 *   (see `tinyServerCommand()`). Environment: TINY_GREETING goes into the
 *   prompt's description (so a test sees the env reached the server);
 *   TINY_REQUIRE_TOKEN makes it exit with code 2 and a line on stderr unless
 *   TINY_TOKEN has that value; TINY_ENV_FILE: at start it writes its whole
 *   environment there as JSON (tests of what a server is given, by Test
 *   connection or by the agent that starts it).
 * - In-process over HTTP on 127.0.0.1 with `startTinyHttpServer()`: Streamable
 *   HTTP at `/mcp` and the older SSE transport at `/sse` (+ `/messages`),
 *   optionally refusing requests without `Authorization: Bearer <token>`.
 */
import { writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js'
import { z } from 'zod'
import { TINY_SERVER_BUNDLE_ENV } from '../bundle-env'

export const TINY_SERVER_NAME = 'tiny-mcp'

export function createTinyServer(greeting = 'hello'): McpServer {
  const server = new McpServer({ name: TINY_SERVER_NAME, version: '0.1.0' })
  server.registerTool('echo', { description: 'Echoes its text back', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }]
  }))
  server.registerPrompt('greet', { description: `Says ${greeting}` }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: greeting } }]
  }))
  server.registerResource('readme', 'tiny://readme', { description: 'About this server', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'A tiny MCP server for tests.' }]
  }))
  return server
}

/**
 * How to start the stdio server as a subprocess, from any working directory: under vitest, its one-file build
 * (test/bundles.ts, named in TINY_MCP_SERVER_BUNDLE); elsewhere, this file through tsx.
 */
export function tinyServerCommand(): { command: string; args: string[] } {
  const bundle = process.env[TINY_SERVER_BUNDLE_ENV]
  if (bundle) return { command: process.execPath, args: [bundle] }
  const tsxLoader = createRequire(import.meta.url).resolve('tsx')
  const loader = process.platform === 'win32' ? pathToFileURL(tsxLoader).href : tsxLoader
  return { command: process.execPath, args: ['--import', loader, fileURLToPath(import.meta.url)] }
}

export interface TinyHttpServer {
  /** Streamable HTTP endpoint. */
  url: string
  /** SSE endpoint (the older transport). */
  sseUrl: string
  /** The headers of every request received, in order. */
  requests: { path: string; headers: IncomingMessage['headers'] }[]
  close(): Promise<void>
}

export async function startTinyHttpServer(options: { token?: string } = {}): Promise<TinyHttpServer> {
  const requests: TinyHttpServer['requests'] = []
  const sseTransports = new Map<string, SSEServerTransport>()
  const http: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error))
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    requests.push({ path, headers: req.headers })
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('missing or wrong token')
      return
    }
    if (path === '/mcp') {
      // Stateless: a fresh server and transport per request.
      const server = createTinyServer()
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
      res.on('close', () => {
        void transport.close()
        void server.close()
      })
      await server.connect(transport)
      await transport.handleRequest(req, res)
      return
    }
    if (path === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res)
      sseTransports.set(transport.sessionId, transport)
      res.on('close', () => sseTransports.delete(transport.sessionId))
      await createTinyServer().connect(transport)
      return
    }
    if (path === '/messages' && req.method === 'POST') {
      const sessionId = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('sessionId') ?? ''
      const transport = sseTransports.get(sessionId)
      if (!transport) {
        res.writeHead(404).end('unknown session')
        return
      }
      await transport.handlePostMessage(req, res)
      return
    }
    res.writeHead(404).end('not found')
  }

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const transport of sseTransports.values()) void transport.close()
        http.closeAllConnections()
        http.close(() => resolve())
      })
  }
}

async function runStdio(): Promise<void> {
  const required = process.env.TINY_REQUIRE_TOKEN
  if (required && process.env.TINY_TOKEN !== required) {
    process.stderr.write('tiny-mcp: TINY_TOKEN is missing or wrong\n')
    process.exit(2)
  }
  if (process.env.TINY_ENV_FILE) writeFileSync(process.env.TINY_ENV_FILE, JSON.stringify(process.env))
  await createTinyServer(process.env.TINY_GREETING || 'hello').connect(new StdioServerTransport())
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runStdio().catch((error: unknown) => {
    process.stderr.write(`tiny-mcp: ${String(error)}\n`)
    process.exit(1)
  })
}
