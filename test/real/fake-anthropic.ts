import type { ServerResponse } from 'node:http'
import { eventStream, json, pause, startFakeApiServer } from './fake-api-server'

/**
 * A small local stand-in for Anthropic's Messages API, so real Claude Code
 * (claude-agent-acp) runs whole turns offline. A line of the user's latest
 * prompt drives the model (the main conversation: a request that offers
 * Claude Code's tools):
 *
 * - `WRITE <absolute path> <text>`: a call of the Write tool (`\n` in the text is a newline);
 * - `EDIT <absolute path> <old> => <new>`: a call of Read on the file, then of Edit
 *   (Claude Code edits only a file it has read);
 * - `BASH <command>`: a call of the Bash tool;
 * - `SLOW`: a long text streamed in many small, slow deltas (to cancel mid-stream);
 * - `FAIL500` / `FAIL400`: an HTTP error with Anthropic's JSON error body
 *   carrying {@link FAIL_MESSAGE};
 * - anything else: the text `Echo: <the prompt's last line>` streamed in a few deltas.
 *
 * Once the tools of a prompt have answered, the model says `Done: <tool> finished.`
 * (or `The <tool> call failed: <result>` when the last one failed). Requests
 * Claude Code makes on the side (titles, summaries) get a short text answer,
 * `count_tokens` a count. Streams SSE as the real API does; every request is
 * recorded, and paths it does not serve are recorded as unknown (and answered
 * with an empty object).
 */

export const FAIL_MESSAGE = 'The fake Anthropic backend is out of order (FAIL).'

export interface FakeAnthropic {
  url: string
  /** Every POST /v1/messages body received. */
  requests: MessagesRequest[]
  /** The main conversation's requests (those offering Claude Code's tools, without its guesses at the next message). */
  main: () => MessagesRequest[]
  /** Requests to paths it does not serve: `METHOD path`. */
  unknown: string[]
  close: () => Promise<void>
}

export interface ContentBlock {
  type: string
  text?: string
  content?: unknown
  name?: string
  input?: Record<string, unknown>
  is_error?: boolean
}

export interface MessagesRequest {
  model?: string
  stream?: boolean
  tools?: { name: string }[]
  messages: { role: string; content: string | ContentBlock[] }[]
}

type Call = { name: string; input: Record<string, unknown> }

type Reply =
  | { kind: 'text'; chunks: string[]; delayMs: number }
  | { kind: 'tool'; name: string; input: Record<string, unknown>; id: string }
  | { kind: 'fail'; status: number; type: string; message: string }

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: MessagesRequest[] = []
  const unknown: string[] = []
  let toolCount = 0
  const server = await startFakeApiServer(
    'fake-anthropic',
    async ({ method, path, raw }, res) => {
      if (method === 'POST' && path.endsWith('/v1/messages/count_tokens')) return json(res, 200, { input_tokens: 10 })
      // Claude Code checks that the API answers at all (a HEAD of the base URL).
      if (method === 'HEAD' && path === '/') return json(res, 200, {})
      if (method !== 'POST' || !path.endsWith('/v1/messages')) {
        // Anything else: recorded, and a plausible, harmless answer.
        unknown.push(`${method} ${path}`)
        return json(res, 200, {})
      }
      const body = JSON.parse(raw) as MessagesRequest
      requests.push(body)
      const reply = isMain(body) ? replyTo(body, () => `toolu_fake_${++toolCount}`) : text('Fake title')
      if (reply.kind === 'fail') return json(res, reply.status, { type: 'error', error: { type: reply.type, message: reply.message } })
      if (body.stream) return stream(res, body, reply)
      whole(res, body, reply)
    },
    (message) => ({ type: 'error', error: { type: 'api_error', message } })
  )
  return { ...server, requests, main: () => requests.filter(isMain), unknown }
}

/**
 * A request of the conversation itself: it offers Claude Code's tools, and is not the guess at the user's next
 * message Claude Code asks for after a turn, at a moment of its own (the conversation with a "[SUGGESTION MODE: …]"
 * message after it, the same tools offered).
 */
function isMain(body: MessagesRequest): boolean {
  return (body.tools?.some((t) => t.name === 'Write' || t.name === 'Bash') ?? false) && !promptOf(body).startsWith('[SUGGESTION MODE:')
}

/** What the user typed in a message: its text blocks, without those Claude Code adds (`<system-reminder>` and the like). */
export function typedText(content: string | ContentBlock[]): string[] {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content
  return blocks.filter((b) => b.type === 'text' && b.text?.trim() && !b.text.trimStart().startsWith('<')).map((b) => b.text ?? '')
}

/**
 * The latest prompt of a request: the last text the user typed. Claude Code
 * sends a failed or cancelled turn's prompt and the next one in one message
 * (the API wants user and assistant to take turns), one text block each.
 */
export function promptOf(body: MessagesRequest): string {
  return typedText(body.messages[lastPromptAt(body)]?.content ?? []).at(-1) ?? ''
}

function lastPromptAt(body: MessagesRequest): number {
  return body.messages.findLastIndex((m) => m.role === 'user' && typedText(m.content).length > 0)
}

/**
 * The model's move: the calls the latest prompt asks for are made one by one
 * (those already made are the tool uses after that prompt; Claude Code may
 * fold a tool result and the next prompt into one message), then a text.
 */
function replyTo(body: MessagesRequest, nextId: () => string): Reply {
  const said = promptOf(body)
  const after = body.messages.slice(lastPromptAt(body) + 1)
  const made = after.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_use') : []))
  const calls: Call[] = []
  for (const line of said.split('\n').map((l) => l.trim())) {
    let m: RegExpExecArray | null
    if ((m = /^WRITE (\S+) (.*)$/.exec(line))) calls.push({ name: 'Write', input: { file_path: m[1], content: unescapeNewlines(m[2]) } })
    else if ((m = /^EDIT (\S+) (.*) => (.*)$/.exec(line))) {
      calls.push({ name: 'Read', input: { file_path: m[1] } })
      calls.push({ name: 'Edit', input: { file_path: m[1], old_string: unescapeNewlines(m[2]), new_string: unescapeNewlines(m[3]) } })
    } else if ((m = /^BASH (.+)$/.exec(line))) calls.push({ name: 'Bash', input: { command: m[1], description: `Run ${m[1]}` } })
    else if (line === 'SLOW') {
      return { kind: 'text', chunks: Array.from({ length: 60 }, (_, i) => `slow${i + 1} `), delayMs: 150 }
    } else if (line === 'FAIL500') return { kind: 'fail', status: 500, type: 'api_error', message: FAIL_MESSAGE }
    else if (line === 'FAIL400') return { kind: 'fail', status: 400, type: 'invalid_request_error', message: FAIL_MESSAGE }
  }
  const next = calls[made.length]
  if (next) return { kind: 'tool', ...next, id: nextId() }
  if (made.length) {
    const lastUse = made[made.length - 1]!
    const results = after.flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result') : []))
    const result = results[results.length - 1]
    return result?.is_error ? text(`The ${lastUse.name} call failed: ${resultText(result.content)}`) : text(`Done: ${lastUse.name} finished.`)
  }
  const lines = said.split('\n').filter((l) => l.trim())
  return text(`Echo: ${lines[lines.length - 1]?.trim() ?? ''}`)
}

function unescapeNewlines(s: string | undefined): string {
  return (s ?? '').replace(/\\n/g, '\n')
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((b: ContentBlock) => b.text ?? '').join(' ')
  return ''
}

function text(whole: string): Reply {
  // A few deltas, as the real API streams them.
  const words = whole.split(/(?<= )/)
  const chunks: string[] = []
  for (let i = 0; i < words.length; i += 2) chunks.push(words.slice(i, i + 2).join(''))
  return { kind: 'text', chunks: chunks.length ? chunks : [''], delayMs: 20 }
}

/** The tokens the fake says each request counted. */
export const INPUT_TOKENS = 120
export const OUTPUT_TOKENS = 42

async function stream(res: ServerResponse, body: MessagesRequest, reply: Exclude<Reply, { kind: 'fail' }>): Promise<void> {
  const events = eventStream(res)
  const send = (event: string, data: unknown): void => events.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  const model = body.model ?? 'claude-fake'
  send('message_start', {
    type: 'message_start',
    message: {
      id: `msg_fake_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: INPUT_TOKENS, output_tokens: 1 }
    }
  })
  if (reply.kind === 'text') {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    for (const chunk of reply.chunks) {
      if (events.closed) return
      send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: chunk } })
      if (reply.delayMs) await pause(reply.delayMs)
    }
  } else {
    send('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: reply.id, name: reply.name, input: {} }
    })
    send('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) }
    })
  }
  if (events.closed) return
  send('content_block_stop', { type: 'content_block_stop', index: 0 })
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null },
    usage: { output_tokens: OUTPUT_TOKENS }
  })
  send('message_stop', { type: 'message_stop' })
  res.end()
}

function whole(res: ServerResponse, body: MessagesRequest, reply: Exclude<Reply, { kind: 'fail' }>): void {
  const content =
    reply.kind === 'text'
      ? [{ type: 'text', text: reply.chunks.join('') }]
      : [{ type: 'tool_use', id: reply.id, name: reply.name, input: reply.input }]
  json(res, 200, {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'claude-fake',
    content,
    stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: INPUT_TOKENS, output_tokens: OUTPUT_TOKENS }
  })
}
