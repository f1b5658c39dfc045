import type { ServerResponse } from 'node:http'
import { eventStream, json, parseBody, pause, startFakeApiServer } from './fake-api-server'

/**
 * A small local stand-in for Google's Gemini API (the Developer API Gemini CLI
 * reaches through `GOOGLE_GEMINI_BASE_URL`), so real Gemini CLI runs whole
 * turns offline. A line of the user's latest message drives the model:
 *
 * - `WRITE <absolute path> <text>`: a call of Gemini CLI's `write_file` tool
 *   (`\n` in the text is a newline);
 * - `READ <absolute path>`: a call of `read_file`;
 * - `SHELL <command>`: a call of `run_shell_command`;
 * - `CALL <tool> <JSON arguments>`: a call of any tool by the name the model was given (an MCP server's tool
 *   is `mcp_<server>_<tool>` to Gemini CLI);
 * - `SLOW`: a long text streamed in many small, slow chunks (to cancel mid-stream);
 * - `FAIL500`: HTTP 500 with a JSON error body carrying {@link FAIL500_MESSAGE};
 * - anything else: the text `Echo: <the user's last line>` streamed in a few chunks.
 *
 * Once a tool's response comes back the model answers with text naming the
 * tool (`Done: <tool> finished.`, or `The <tool> call failed: <error>`). Side requests (`:generateContent`, not streamed) get a short text
 * answer, `:countTokens` a count. Every request is recorded; paths it does not
 * know are recorded too (and answered 404), so a test can say what was called.
 */

export const FAIL500_MESSAGE = 'The fake Gemini backend is out of order (FAIL500).'

export interface Part {
  text?: string
  thought?: boolean
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string }
  functionResponse?: { name: string; response?: unknown; id?: string }
}

export interface Content {
  role?: string
  parts?: Part[]
}

export interface GeminiRequest {
  method: string
  /** The path without the query, e.g. `/v1beta/models/gemini-2.5-pro:streamGenerateContent`. */
  path: string
  /** `streamGenerateContent`, `generateContent`, `countTokens`, or '' for paths it does not know. */
  action: string
  model: string
  body: { contents?: Content[]; tools?: { functionDeclarations?: { name: string }[] }[]; [key: string]: unknown }
  /** The API key the request carried (the `x-goog-api-key` header). */
  apiKey?: string
}

export interface FakeGemini {
  url: string
  /** Every request received, in order. */
  requests: GeminiRequest[]
  /** Requests to paths it does not serve. */
  unknown: GeminiRequest[]
  /** The streamed (main model) requests only. */
  streamed: () => GeminiRequest[]
  close: () => Promise<void>
}

type Reply =
  | { kind: 'text'; chunks: string[]; delayMs: number }
  | { kind: 'call'; name: string; args: Record<string, unknown> }
  | { kind: 'fail'; status: number; message: string }

const MODEL_PATH = /^\/v1(?:beta|alpha|)\/models\/([^/:]+):(\w+)$/

export async function startFakeGemini(): Promise<FakeGemini> {
  const requests: GeminiRequest[] = []
  const unknown: GeminiRequest[] = []
  const server = await startFakeApiServer(
    'fake-gemini',
    async ({ method, path, headers, raw }, res) => {
      const body = parseBody<GeminiRequest['body']>(raw)
      const match = MODEL_PATH.exec(path)
      const action = method === 'POST' && match ? (match[2] ?? '') : ''
      const key = headers['x-goog-api-key']
      const request: GeminiRequest = { method, path, action, model: match?.[1] ?? '', body, apiKey: typeof key === 'string' ? key : undefined }
      requests.push(request)
      switch (action) {
        case 'streamGenerateContent':
          return stream(res, replyTo(request.body.contents ?? []))
        case 'generateContent':
          return whole(res, sideReply(request.body))
        case 'countTokens':
          return json(res, 200, { totalTokens: Math.ceil(raw.length / 4) })
        default:
          unknown.push({ ...request, action: '' })
          return json(res, 404, { error: { code: 404, message: `fake-gemini does not serve ${method} ${path}`, status: 'NOT_FOUND' } })
      }
    },
    (message) => ({ error: { code: 500, message, status: 'INTERNAL' } })
  )
  return { ...server, requests, unknown, streamed: () => requests.filter((r) => r.action === 'streamGenerateContent') }
}

/** The text of a content's parts (thoughts left out). */
export function textOfContent(content: Content | undefined): string {
  return (content?.parts ?? [])
    .filter((p) => typeof p.text === 'string' && !p.thought)
    .map((p) => p.text)
    .join('\n')
}

/** The model's move for the main, streamed conversation. */
function replyTo(contents: Content[]): Reply {
  const last = contents[contents.length - 1]
  const response = last?.parts?.find((p) => p.functionResponse)?.functionResponse
  if (response) {
    const error = (response.response as { error?: unknown } | undefined)?.error
    return text(error ? `The ${response.name} call failed: ${String(error)}` : `Done: ${response.name} finished.`)
  }
  const said = textOfContent(last)
  for (const line of said.split('\n').map((l) => l.trim())) {
    let m: RegExpExecArray | null
    if ((m = /^WRITE (\S+) (.*)$/.exec(line))) return call('write_file', { file_path: m[1], content: (m[2] ?? '').replace(/\\n/g, '\n') })
    if ((m = /^READ (\S+)$/.exec(line))) return call('read_file', { file_path: m[1] })
    if ((m = /^SHELL (.+)$/.exec(line))) return call('run_shell_command', { command: m[1], description: `Run ${m[1]}` })
    if ((m = /^CALL (\S+) (\{.*\})$/.exec(line))) return call(m[1] ?? '', JSON.parse(m[2] ?? '{}') as Record<string, unknown>)
    if (line === 'SLOW') {
      const words = Array.from({ length: 60 }, (_, i) => `slow${i + 1} `)
      return { kind: 'text', chunks: words, delayMs: 150 }
    }
    if (line === 'FAIL500') return { kind: 'fail', status: 500, message: FAIL500_MESSAGE }
  }
  const lines = said.split('\n').filter((l) => l.trim())
  return text(`Echo: ${lines[lines.length - 1]?.trim() ?? ''}`)
}

/**
 * Side requests (the model router's classifier, next-speaker checks, titles):
 * when a JSON answer is asked for, an object of its schema's required fields
 * (a `next_speaker` of `user`, so the turn ends); otherwise a short text.
 */
function sideReply(body: GeminiRequest['body']): Reply {
  const config = (body['generationConfig'] ?? {}) as { responseJsonSchema?: Schema; responseSchema?: Schema }
  const schema = config.responseJsonSchema ?? config.responseSchema
  if (schema) return { kind: 'text', chunks: [JSON.stringify(sample(schema))], delayMs: 0 }
  return text('Fake title')
}

interface Schema {
  type?: string
  enum?: string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
}

function sample(schema: Schema): unknown {
  if (schema.enum?.length) return schema.enum.includes('user') ? 'user' : schema.enum[0]
  switch ((schema.type ?? 'object').toLowerCase()) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(schema.properties ?? {})) out[key] = sample(value)
      return out
    }
    case 'array':
      return []
    case 'integer':
    case 'number':
      return 10
    case 'boolean':
      return false
    default:
      return 'The fake model says so.'
  }
}

function text(whole: string): Reply {
  // A few chunks, as the real API streams them.
  const words = whole.split(/(?<= )/)
  const chunks: string[] = []
  for (let i = 0; i < words.length; i += 3) chunks.push(words.slice(i, i + 3).join(''))
  return { kind: 'text', chunks: chunks.length ? chunks : [''], delayMs: 5 }
}

function call(name: string, args: Record<string, unknown>): Reply {
  return { kind: 'call', name, args }
}

const usage = (output: number) => ({ promptTokenCount: 120, candidatesTokenCount: output, totalTokenCount: 120 + output })

function fail(res: ServerResponse, reply: Extract<Reply, { kind: 'fail' }>): void {
  json(res, reply.status, { error: { code: reply.status, message: reply.message, status: 'INTERNAL' } })
}

async function stream(res: ServerResponse, reply: Reply): Promise<void> {
  if (reply.kind === 'fail') return fail(res, reply)
  const events = eventStream(res)
  const send = (data: unknown): void => events.write(`data: ${JSON.stringify(data)}\r\n\r\n`)
  if (reply.kind === 'call') {
    send({
      candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: reply.name, args: reply.args } }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usage(10),
      modelVersion: 'fake-gemini'
    })
    res.end()
    return
  }
  for (const [i, chunk] of reply.chunks.entries()) {
    if (events.closed) return
    const lastChunk = i === reply.chunks.length - 1
    send({
      candidates: [{ content: { role: 'model', parts: [{ text: chunk }] }, index: 0, ...(lastChunk ? { finishReason: 'STOP' } : {}) }],
      ...(lastChunk ? { usageMetadata: usage(reply.chunks.length) } : {}),
      modelVersion: 'fake-gemini'
    })
    if (!lastChunk && reply.delayMs) await pause(reply.delayMs)
  }
  res.end()
}

function whole(res: ServerResponse, reply: Reply): void {
  if (reply.kind === 'fail') return fail(res, reply)
  const parts = reply.kind === 'call' ? [{ functionCall: { name: reply.name, args: reply.args } }] : [{ text: reply.chunks.join('') }]
  json(res, 200, {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage(8),
    modelVersion: 'fake-gemini'
  })
}
