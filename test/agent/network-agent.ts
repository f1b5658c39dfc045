import { spawn, type ChildProcess } from 'node:child_process'
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { Socket } from 'node:net'
import { Readable, Writable } from 'node:stream'
import { ndJsonStream } from '@agentclientprotocol/sdk'
import { AcpServer } from '@agentclientprotocol/sdk/experimental/server'
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from '@agentclientprotocol/sdk/experimental/node'
import { WebSocketServer } from 'ws'
import { scriptedAgentCommand } from './spawn'

/**
 * The scripted agent over the network, for tests: the SDK's server transports
 * (Streamable HTTP and WebSocket, one port) on 127.0.0.1, each ACP connection
 * served by its own scripted agent process bridged to the connection (its
 * sessions live in `SCRIPTED_AGENT_STATE_DIR`, so a new connection can load or
 * resume them). Requests without `Authorization: Bearer <token>` are refused
 * with 401 when a token is set. `drop()` cuts every socket at once, as a
 * network that fails does. With `tls`, it serves HTTPS/WSS with that key and
 * certificate.
 */

export interface NetworkAgentOptions {
  /** The scripted agent's environment (SCRIPTED_AGENT_STATE_DIR…). */
  env?: Record<string, string>
  token?: string
  tls?: { key: string; cert: string }
}

export interface NetworkAgent {
  /** `http://127.0.0.1:<port>/acp` (https with TLS). */
  httpUrl: string
  /** `ws://127.0.0.1:<port>/acp` (wss with TLS). */
  wsUrl: string
  /** ACP connections accepted so far. */
  readonly connections: number
  /** Requests refused for a missing or wrong token. */
  readonly refused: number
  /** Cuts every open socket (WebSocket and HTTP streams alike); the agents serving them end with them. */
  drop(): void
  close(): Promise<void>
}

export async function startNetworkAgent(options: NetworkAgentOptions = {}): Promise<NetworkAgent> {
  const { command, args } = scriptedAgentCommand()
  const children = new Set<ChildProcess>()
  const sockets = new Set<Socket>()
  let connections = 0
  let refused = 0
  const acp = new AcpServer({
    createAgent: () => ({
      connect(stream) {
        connections++
        const child = spawn(command, args, { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'inherit'] })
        children.add(child)
        child.stdin.on('error', () => undefined)
        const agent = ndJsonStream(
          Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
          Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>
        )
        void stream.readable.pipeTo(agent.writable).catch(() => child.kill())
        void agent.readable.pipeTo(stream.writable).catch(() => child.kill())
        const closed = new Promise<void>((resolve) =>
          child.once('close', () => {
            children.delete(child)
            resolve()
          })
        )
        return { closed }
      }
    })
  })
  const authorised = (req: IncomingMessage): boolean => !options.token || req.headers.authorization === `Bearer ${options.token}`
  const handle = createNodeHttpHandler(acp)
  const server: Server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }) : createHttpServer()
  server.on('request', (req, res) => {
    if (!authorised(req)) {
      refused++
      res.writeHead(401, { 'content-type': 'text/plain' }).end('missing or wrong token')
      return
    }
    handle(req, res)
  })
  const wss = new WebSocketServer({ noServer: true })
  const upgrade = createNodeWebSocketUpgradeHandler(acp, wss)
  server.on('upgrade', (req, socket, head) => {
    if (!authorised(req)) {
      refused++
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
      return
    }
    upgrade(req, socket, head)
  })
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  const secure = options.tls ? 's' : ''
  return {
    httpUrl: `http${secure}://127.0.0.1:${port}/acp`,
    wsUrl: `ws${secure}://127.0.0.1:${port}/acp`,
    get connections() {
      return connections
    },
    get refused() {
      return refused
    },
    drop() {
      for (const socket of sockets) socket.destroy()
      for (const client of wss.clients) client.terminate()
      for (const child of children) child.kill()
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await acp.close().catch(() => undefined)
      await new Promise<void>((resolve) => server.close(() => resolve()))
      for (const child of children) child.kill()
    }
  }
}
