import { readFileSync } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Readable } from 'node:stream'
import { rootCertificates } from 'node:tls'
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client'
import { createWebSocketStream, type WebSocketConstructor } from '@agentclientprotocol/sdk/experimental/ws-client'
import WebSocket from 'ws'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { NetworkTransport } from '../../../shared/transport'
import type { AgentLink, LinkEnd, LinkOptions } from './link'

/**
 * One connection to an agent over the network: the SDK's client transport
 * (WebSocket for ws:// and wss://, Streamable HTTP for http:// and https://)
 * in place of a process's stdio. TLS is always verified, against the system's
 * authorities and the agent's own CA file when it has one. There is no
 * stderr: what explains a failure is what the network said (the HTTP status,
 * the socket's close code, the TLS or connection error), and every error
 * says it. The connection and its end are logged (logs/<agentId>.log) as a
 * process's stderr is. A link is never reused: a reconnect is a new link.
 */

export interface NetworkOptions extends LinkOptions {
  /** Headers sent on every request (from the secret store). */
  headers: Record<string, string>
}

/** How long the WebSocket opening handshake may take. */
const HANDSHAKE_TIMEOUT_MS = 30_000
/** How long stop() waits for the server to close before it lets go. */
const CLOSE_GRACE_MS = 1000

export class NetworkLink implements AgentLink {
  readonly stream: Stream
  /** A connection that cannot be made ends the link too, with what the network said. */
  readonly exited: Promise<LinkEnd>
  /** Set once the connection has ended, with how. */
  private end: LinkEnd | null = null
  private stopping = false
  private resolveExited!: (end: LinkEnd) => void
  private readonly inner: Stream
  private closeInfo: { code: number; reason: string } | null = null
  private opened = false

  constructor(
    private readonly definition: Pick<AgentDefinition, 'id' | 'name'>,
    private readonly transport: NetworkTransport,
    private readonly options: NetworkOptions
  ) {
    const remote = transport
    this.exited = new Promise<LinkEnd>((resolve) => (this.resolveExited = resolve))
    const headerNames = Object.keys(options.headers)
    this.writeLog(
      `\n--- ${new Date().toISOString()} connecting to ${remote.url}${headerNames.length ? ` (headers: ${headerNames.join(', ')})` : ''}${remote.caFile ? ` trusting ${remote.caFile}` : ''}\n`
    )
    const ca = trustedAuthorities(definition.name, transport)
    if (/^wss?:/i.test(remote.url)) {
      this.inner = createWebSocketStream(remote.url, {
        headers: options.headers,
        WebSocket: this.webSocketClass(ca, options.maxMessageBytes),
        cookies: 'omit'
      })
    } else {
      this.inner = createHttpStream(remote.url, {
        headers: options.headers,
        fetch: nodeFetch(ca, () => this.noteOpened()),
        cookies: 'omit',
        maxMessageBytes: options.maxMessageBytes + 1024
      })
    }
    this.stream = this.watch(this.inner)
  }

  /** Closes the connection (the agent's server keeps its sessions, to be resumed). */
  async stop(): Promise<void> {
    if (this.end) return
    this.stopping = true
    void this.inner.writable.close().catch(() => undefined)
    const ended = await Promise.race([this.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), CLOSE_GRACE_MS))])
    if (!ended) {
      void this.inner.readable.cancel().catch(() => undefined)
      this.ended('closed by Switchboard')
    }
    await this.exited
  }

  private writeLog(text: string): void {
    this.options.log(text)
  }

  private noteOpened(): void {
    if (this.opened) return
    this.opened = true
    this.writeLog('--- connected\n')
  }

  /** The `ws` WebSocket with this agent's trust and limits, whose opening and closing the link hears of. */
  private webSocketClass(ca: string[] | undefined, maxMessageBytes: number): WebSocketConstructor {
    const link = this
    return class extends WebSocket {
      constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
        super(url, protocols, {
          ...options,
          ...(ca ? { ca } : {}),
          handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
          maxPayload: maxMessageBytes + 1024,
          followRedirects: false
        })
        this.once('open', () => link.noteOpened())
        this.once('close', (code: number, reason: Buffer) => (link.closeInfo = { code, reason: reason.toString('utf8') }))
      }
    } as unknown as WebSocketConstructor
  }

  /**
   * The link ended (or never opened): said once, with what the network said. Every end Switchboard did not ask for
   * is a lost connection (its sessions reconnect).
   */
  private ended(reason: string): void {
    if (this.end) return
    const { name } = this.definition
    const summary = this.opened
      ? `The connection to agent '${name}' at ${this.transport.url} was lost: ${reason}`
      : `Agent '${name}' could not be reached at ${this.transport.url}: ${reason}`
    this.end = { summary, connectionLost: !this.stopping }
    this.writeLog(`--- ${this.stopping ? 'disconnected' : summary}\n`)
    this.resolveExited(this.end)
  }

  /** The incoming side: the end of it is the end of the link, said with what the network said. */
  private watch(stream: Stream): Stream {
    const reader = stream.readable.getReader()
    const readable = new ReadableStream<AnyMessage>({
      pull: async (controller) => {
        try {
          const { value, done } = await reader.read()
          if (done) {
            this.ended(this.closeReason())
            controller.close()
            return
          }
          this.noteOpened()
          controller.enqueue(value)
        } catch (error) {
          this.ended(describeNetworkError(error, this.closeInfo))
          controller.error(new Error(this.end?.summary))
        }
      },
      cancel: (reason) => reader.cancel(reason)
    })
    return { readable, writable: stream.writable }
  }

  private closeReason(): string {
    if (this.stopping) return 'closed by Switchboard'
    const close = this.closeInfo
    if (!close) return 'the server closed the connection'
    return `the server closed the connection (WebSocket code ${close.code}${close.reason ? `: ${close.reason}` : ''})`
  }
}

/** The authorities trusted for the agent's TLS: the system's and its CA file's (undefined: Node's defaults). */
function trustedAuthorities(name: string, transport: NetworkTransport): string[] | undefined {
  const caFile = transport.caFile
  if (!caFile) return undefined
  let pem: string
  try {
    pem = readFileSync(caFile, 'utf8')
  } catch (error) {
    throw new Error(`Agent '${name}': its CA file ${caFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`Agent '${name}': its CA file ${caFile} holds no PEM certificate`)
  return [...rootCertificates, pem]
}

/**
 * A fetch on Node's http and https modules, so the agent's CA can be trusted
 * (the global fetch takes no TLS options); the response body streams (SSE).
 */
function nodeFetch(ca: string[] | undefined, onResponse: () => void): typeof globalThis.fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input))
      const headers: Record<string, string> = {}
      new Headers(init.headers).forEach((value, key) => (headers[key] = value))
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest
      const req = send(
        url,
        { method: init.method ?? 'GET', headers, ...(ca ? { ca } : {}), signal: init.signal ?? undefined },
        (res: IncomingMessage) => {
          onResponse()
          const status = res.statusCode ?? 0
          const responseHeaders = new Headers()
          for (const [key, value] of Object.entries(res.headers)) {
            for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(key, item)
          }
          const noBody = status === 204 || status === 205 || status === 304 || init.method === 'HEAD'
          if (noBody) res.resume()
          resolve(
            new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage ?? '',
              headers: responseHeaders
            })
          )
        }
      )
      req.on('error', reject)
      const body = init.body
      if (body === undefined || body === null) req.end()
      else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body)
      else reject(new Error('Only text bodies are sent to network agents'))
    })
}

const TLS_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_NOT_YET_VALID'
])

/** What the network said, as a sentence the user can act on. */
export function describeNetworkError(error: unknown, close?: { code: number; reason: string } | null): string {
  const err = error as (Error & { code?: string; status?: number; cause?: { code?: string; message?: string } }) | undefined
  const code = err?.code ?? err?.cause?.code
  const message = err?.message ?? String(error)
  const status = err?.status ?? Number(/Unexpected server response: (\d+)/.exec(message)?.[1] ?? /failed: (\d{3}) /.exec(message)?.[1] ?? NaN)
  if (status === 401 || status === 403) {
    return `the server refused the connection (HTTP ${status}${status === 401 ? ' Unauthorized' : ' Forbidden'}): check the agent's token or headers`
  }
  if (Number.isFinite(status) && status > 0) return `the server answered HTTP ${status} (${message})`
  if (code && TLS_CODES.has(code)) {
    return `its TLS certificate is not trusted (${code}: ${err?.message}); give the agent the CA file that signed it`
  }
  if (code === 'ECONNREFUSED') return 'nothing is listening there (connection refused)'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its host name cannot be resolved'
  if (code === 'ECONNRESET') return 'the connection was reset'
  if (code === 'ETIMEDOUT' || /timed out|timeout/i.test(message)) return 'the connection timed out'
  if (close) return `the server closed the connection (WebSocket code ${close.code}${close.reason ? `: ${close.reason}` : ''})`
  return message
}
