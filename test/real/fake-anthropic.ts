import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A small local stand-in for Anthropic's Messages API, so real Claude Code
 * (claude-agent-acp) runs whole turns offline. A prompt line
 * `WRITE <absolute path> <text>` makes the model call the Write tool with that
 * file and text; once the tool's result comes back (or for any other prompt)
 * it answers with text. Requests Claude Code makes on the side (titles,
 * summaries) get a short text answer. Streams SSE as the real API does.
 */

export interface FakeAnthropic {
  url: string
  /** Every POST /v1/messages body received. */
  requests: MessagesRequest[]
  close: () => Promise<void>
}

interface ContentBlock {
  type: string
  text?: string
  content?: unknown
}

interface MessagesRequest {
  model?: string
  stream?: boolean
  tools?: { name: string }[]
  messages: { role: string; content: string | ContentBlock[] }[]
}

type Reply = { kind: 'text'; text: string } | { kind: 'tool'; name: string; input: Record<string, unknown> }

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: MessagesRequest[] = []
  let toolCount = 0
  const server: Server = createServer((req, res) => {
    void handle(req, res)
  })
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const path = (req.url ?? '').split('?')[0]
    if (req.method !== 'POST' || !path?.endsWith('/v1/messages')) {
      // count_tokens and anything else: a plausible, harmless answer.
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(path?.endsWith('/count_tokens') ? { input_tokens: 10 } : {}))
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesRequest
    requests.push(body)
    const reply = replyTo(body, () => `toolu_fake_${++toolCount}`)
    if (body.stream) stream(res, body, reply)
    else whole(res, body, reply)
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

function textOf(content: string | ContentBlock[]): string {
  return typeof content === 'string' ? content : content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('\n')
}

/**
 * The model's move: the first `WRITE` asked for in the user's messages whose
 * file no earlier tool call wrote is written now (Claude Code may fold a tool
 * result and the next prompt into one message, and add messages of its own);
 * otherwise a short text.
 */
function replyTo(body: MessagesRequest, nextId: () => string): Reply & { id?: string } {
  const written = new Set<string>()
  for (const m of body.messages) {
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue
    for (const b of m.content as (ContentBlock & { name?: string; input?: { file_path?: string } })[]) {
      if (b.type === 'tool_use' && b.input?.file_path) written.add(b.input.file_path)
    }
  }
  if (body.tools?.some((t) => t.name === 'Write')) {
    const asked = body.messages
      .filter((m) => m.role === 'user')
      .map((m) => textOf(m.content))
      .join('\n')
    for (const match of asked.matchAll(/^WRITE (\S+) (.*)$/gm)) {
      const [, file, text] = match
      if (file && !written.has(file))
        return { kind: 'tool', name: 'Write', input: { file_path: file, content: (text ?? '').replace(/\\n/g, '\n') }, id: nextId() }
    }
  }
  const last = body.messages[body.messages.length - 1]
  const answered = Array.isArray(last?.content) && last.content.some((b) => b.type === 'tool_result')
  return { kind: 'text', text: answered ? 'Done: the file is written.' : 'OK.' }
}

function stream(res: ServerResponse, body: MessagesRequest, reply: Reply & { id?: string }): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const send = (event: string, data: unknown): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  const model = body.model ?? 'claude-fake'
  send('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 1 }
    }
  })
  if (reply.kind === 'text') {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.text } })
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
  send('content_block_stop', { type: 'content_block_stop', index: 0 })
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null },
    usage: { output_tokens: 8 }
  })
  send('message_stop', { type: 'message_stop' })
  res.end()
}

function whole(res: ServerResponse, body: MessagesRequest, reply: Reply & { id?: string }): void {
  const content =
    reply.kind === 'text' ? [{ type: 'text', text: reply.text }] : [{ type: 'tool_use', id: reply.id, name: reply.name, input: reply.input }]
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(
    JSON.stringify({
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: body.model ?? 'claude-fake',
      content,
      stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 8 }
    })
  )
}
