import type { ServerResponse } from 'node:http'
import { eventStream, json, parseBody, pause, startFakeApiServer } from './fake-api-server'

/**
 * A small local stand-in for OpenAI's Responses API (`POST /v1/responses`,
 * streamed as server-sent events), so real Codex runs whole turns offline.
 * Codex reaches it through a `model_providers` entry of its config.toml
 * (`base_url` = this url + `/v1`, `wire_api = "responses"`). A line of the
 * user's latest message drives the model:
 *
 * - `SHELL <command>`: a call of Codex's `exec_command` tool (a function call)
 *   asking to run outside the sandbox (`sandbox_permissions: "require_escalated"`),
 *   as a model does for a command that writes when the sandbox is read-only;
 * - `ADD <absolute path> <text>`: a call of Codex's `apply_patch` tool (a
 *   freeform custom tool call) adding that file with that one line;
 * - `EDIT <absolute path> <old line> => <new line>`: an `apply_patch` call
 *   replacing that line of an existing file;
 * - `CALL <tool> <JSON arguments>`: a call of a tool Codex nests in its code mode's
 *   `exec` tool (a freeform custom tool taking JavaScript, which Codex 0.166 gives
 *   gpt-6.1-sol in place of a tool list), as the model calls one: `exec` running
 *   `await tools.<tool>(<arguments>)` and giving back what it returns (an MCP
 *   server's tool is `mcp__<server>__<tool>` there);
 * - `SLOW`: a long text streamed in many small, slow deltas (to cancel mid-stream);
 * - `FAIL500`: HTTP 500 with a JSON error body carrying {@link FAIL500_MESSAGE};
 * - `FAIL400`: HTTP 400 with a JSON error body carrying {@link FAIL400_MESSAGE};
 * - anything else: the text `Echo: <the user's last line>` streamed in a few deltas.
 *
 * Once a tool's output comes back the model answers with text naming the tool
 * (`Done: <tool> finished.`, or `The <tool> call failed: <output>` when the
 * output says it was rejected or failed). Every request is recorded; paths it
 * does not know are recorded too (and answered 404), so a test can say what
 * was called.
 */

export const FAIL500_MESSAGE = 'The fake OpenAI backend is out of order (FAIL500).'
export const FAIL400_MESSAGE = 'The fake OpenAI backend refuses this request (FAIL400).'

/** An item of a Responses request's `input` (only the fields the fake reads). */
export interface InputItem {
  type?: string
  role?: string
  content?: string | { type?: string; text?: string }[]
  name?: string
  call_id?: string
  arguments?: string
  input?: string
  output?: unknown
}

export interface OpenAIRequest {
  method: string
  /** The path without the query, e.g. `/v1/responses`. */
  path: string
  body: { model?: string; input?: InputItem[]; tools?: { type?: string; name?: string }[]; stream?: boolean; [key: string]: unknown }
  /** The bearer token the request carried. */
  apiKey?: string
}

export interface FakeOpenAI {
  url: string
  /** Every request received, in order. */
  requests: OpenAIRequest[]
  /** Requests to paths it does not serve. */
  unknown: OpenAIRequest[]
  /** The model requests (`POST /v1/responses`) only. */
  responses: () => OpenAIRequest[]
  /** The main conversation's model requests: not Codex's own on the side (a title for the thread), which ask for structured output. */
  main: () => OpenAIRequest[]
  close: () => Promise<void>
}

type Reply =
  | { kind: 'text'; chunks: string[]; delayMs: number }
  | { kind: 'function'; name: string; args: Record<string, unknown> }
  | { kind: 'custom'; name: string; input: string }
  | { kind: 'fail'; status: number; message: string }

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: OpenAIRequest[] = []
  const unknown: OpenAIRequest[] = []
  let counter = 0
  const server = await startFakeApiServer(
    'fake-openai',
    async ({ method, path, headers, raw }, res) => {
      const auth = headers.authorization
      const body = parseBody<OpenAIRequest['body']>(raw)
      const request: OpenAIRequest = { method, path, body, apiKey: typeof auth === 'string' ? auth.replace(/^Bearer /, '') : undefined }
      requests.push(request)
      if (method === 'POST' && path === '/v1/responses') return stream(res, replyTo(request.body.input ?? []), `${++counter}`)
      unknown.push(request)
      return json(res, 404, {
        error: { message: `fake-openai does not serve ${method} ${path}`, type: 'invalid_request_error', code: null, param: null }
      })
    },
    (message) => ({ error: { message, type: 'server_error', code: null, param: null } })
  )
  return {
    ...server,
    requests,
    unknown,
    responses: () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/responses'),
    main: () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/responses' && !isStructured(r.body))
  }
}

/** A request for structured output (`text.format` a JSON schema): Codex asking for a thread title, not the conversation. */
function isStructured(body: OpenAIRequest['body']): boolean {
  const text = body['text'] as { format?: { type?: unknown } } | undefined
  return text?.format?.type === 'json_schema'
}

/** The text of an input item (a message's text parts, or a tool's output). */
export function textOfItem(item: InputItem | undefined): string {
  if (!item) return ''
  if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') return outputText(item.output)
  if (typeof item.content === 'string') return item.content
  return (item.content ?? []).map((c) => c.text ?? '').join('\n')
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output
  if (Array.isArray(output)) return output.map((o) => (o as { text?: string }).text ?? '').join('\n')
  if (output && typeof output === 'object' && 'content' in output) return String((output as { content: unknown }).content)
  return JSON.stringify(output ?? '')
}

/** The model's move for the conversation so far. */
function replyTo(input: InputItem[]): Reply {
  const last = input[input.length - 1]
  if (last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output') {
    const call = input.find((i) => (i.type === 'function_call' || i.type === 'custom_tool_call') && i.call_id === last.call_id)
    const name = call?.name ?? 'tool'
    const output = outputText(last.output)
    return text(
      /rejected|declined|denied|aborted|failed|error/i.test(output) ? `The ${name} call failed: ${output.trim()}` : `Done: ${name} finished.`
    )
  }
  const lastUser = [...input].reverse().find((i) => i.type === 'message' && i.role === 'user')
  const said = textOfItem(lastUser)
  for (const line of said.split('\n').map((l) => l.trim())) {
    let m: RegExpExecArray | null
    if ((m = /^SHELL (.+)$/.exec(line)))
      return {
        kind: 'function',
        name: 'exec_command',
        args: { cmd: m[1], sandbox_permissions: 'require_escalated', justification: 'The user asked to run it.' }
      }
    if ((m = /^ADD (\S+) (.*)$/.exec(line))) return patch(`*** Add File: ${m[1]}\n+${m[2]}\n`)
    if ((m = /^EDIT (\S+) (.*) => (.*)$/.exec(line))) return patch(`*** Update File: ${m[1]}\n@@\n-${m[2]}\n+${m[3]}\n`)
    if ((m = /^CALL (\S+) (\{.*\})$/.exec(line)))
      return { kind: 'custom', name: 'exec', input: `text(JSON.stringify(await tools.${m[1]}(${JSON.stringify(JSON.parse(m[2] ?? '{}'))})))\n` }
    if (line === 'SLOW') {
      const words = Array.from({ length: 60 }, (_, i) => `slow${i + 1} `)
      return { kind: 'text', chunks: words, delayMs: 150 }
    }
    if (line === 'FAIL500') return { kind: 'fail', status: 500, message: FAIL500_MESSAGE }
    if (line === 'FAIL400') return { kind: 'fail', status: 400, message: FAIL400_MESSAGE }
  }
  const lines = said.split('\n').filter((l) => l.trim())
  return text(`Echo: ${lines[lines.length - 1]?.trim() ?? ''}`)
}

function patch(hunk: string): Reply {
  return { kind: 'custom', name: 'apply_patch', input: `*** Begin Patch\n${hunk}*** End Patch\n` }
}

function text(whole: string): Reply {
  // A few deltas, as the real API streams them.
  const words = whole.split(/(?<= )/)
  const chunks: string[] = []
  for (let i = 0; i < words.length; i += 3) chunks.push(words.slice(i, i + 3).join(''))
  return { kind: 'text', chunks: chunks.length ? chunks : [''], delayMs: 5 }
}

const usage = (output: number) => ({
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 120 + output
})

async function stream(res: ServerResponse, reply: Reply, n: string): Promise<void> {
  if (reply.kind === 'fail') {
    json(res, reply.status, { error: { message: reply.message, type: 'server_error', code: 'fake_failure', param: null } })
    return
  }
  const events = eventStream(res)
  const send = (type: string, data: Record<string, unknown>): void => events.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  const responseId = `resp_fake_${n}`
  const base = { id: responseId, object: 'response', model: 'fake', status: 'in_progress', output: [] }
  send('response.created', { response: base })
  let outputTokens = 10
  if (reply.kind === 'text') {
    const id = `msg_fake_${n}`
    send('response.output_item.added', { output_index: 0, item: { type: 'message', id, role: 'assistant', status: 'in_progress', content: [] } })
    for (const [i, chunk] of reply.chunks.entries()) {
      if (events.closed) return
      send('response.output_text.delta', { item_id: id, output_index: 0, content_index: 0, delta: chunk })
      if (i < reply.chunks.length - 1 && reply.delayMs) await pause(reply.delayMs)
    }
    const whole = reply.chunks.join('')
    send('response.output_item.done', {
      output_index: 0,
      item: { type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: whole, annotations: [] }] }
    })
    outputTokens = reply.chunks.length
  } else if (reply.kind === 'function') {
    const item = { type: 'function_call', id: `fc_fake_${n}`, call_id: `call_fake_${n}`, name: reply.name, arguments: JSON.stringify(reply.args) }
    send('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } })
    send('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: item.arguments })
    send('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed' } })
  } else {
    const item = { type: 'custom_tool_call', id: `ctc_fake_${n}`, call_id: `call_fake_${n}`, name: reply.name, input: reply.input }
    send('response.output_item.added', { output_index: 0, item: { ...item, input: '', status: 'in_progress' } })
    send('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed' } })
  }
  send('response.completed', { response: { ...base, status: 'completed', usage: usage(outputTokens) } })
  res.end()
}
