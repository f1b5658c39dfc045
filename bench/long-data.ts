import { appendFile } from 'node:fs/promises'
import type { TranscriptRecord } from '../shared/transcript'

/**
 * A long day's agent log, a turn at a time: the user's question, a thought,
 * a file read, an edit with its diff, a command with its terminal output, a
 * reply in markdown streamed in three chunks, the turn's end. Seven thread
 * entries from twelve records.
 */

export const LONG_ENTRIES_PER_TURN = 7

const WORDS = 'agent session project stream transcript render listing search index thread entry tool diff plan terminal permission'.split(' ')

function words(i: number, n: number): string {
  return Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ')
}

function diffText(i: number, changed: boolean): string {
  return Array.from({ length: 24 }, (_, k) => `  const ${WORDS[k % WORDS.length]}${k} = ${changed && k % 6 === 3 ? i : k} // ${words(k, 3)}`).join(
    '\n'
  )
}

function terminalText(i: number): string {
  const lines = [`$ npm test -- file-${i}`, '', ` RUN  v4.1.12 /project`, '']
  for (let k = 0; k < 20; k++)
    lines.push(` ✓ test/unit/${WORDS[(i + k) % WORDS.length]}-${k}.test.ts (${(k * 7) % 40} tests) ${(i * 13 + k * 17) % 900}ms`)
  lines.push('', ` Test Files  20 passed (20)`, `      Tests  ${400 + (i % 50)} passed`, `   Duration  ${(i % 90) / 10 + 3}s`)
  return lines.join('\n')
}

/** The records of turn `i` of a long conversation. */
export function longTurn(i: number, at: string): TranscriptRecord[] {
  const messageId = `m-${i}`
  const read = `read-${i}`
  const edit = `edit-${i}`
  const run = `run-${i}`
  const update = (u: Record<string, unknown>): TranscriptRecord => ({ t: 'update', at, update: u as never })
  const reply = [
    `Turn ${i}: ${words(i, 20)}.\n\n`,
    `- ${words(i + 1, 8)}\n- ${words(i + 2, 9)}\n- \`src/file-${i}.ts\` ${words(i + 3, 6)}\n\n`,
    '```ts\n' + `export function step${i}(input: string): string {\n  return input.trim() + '${i}'\n}\n` + '```\n'
  ]
  return [
    { t: 'prompt', at, content: [{ type: 'text', text: `Question ${i}: ${words(i, 14)}?` }] },
    update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `Thinking about ${words(i, 24)}.` } }),
    update({ sessionUpdate: 'tool_call', toolCallId: read, title: `Read src/file-${i}.ts`, kind: 'read', status: 'in_progress' }),
    update({
      sessionUpdate: 'tool_call_update',
      toolCallId: read,
      status: 'completed',
      content: [{ type: 'content', content: { type: 'text', text: diffText(i, false) } }]
    }),
    update({ sessionUpdate: 'tool_call', toolCallId: edit, title: `Edit src/file-${i}.ts`, kind: 'edit', status: 'in_progress' }),
    update({
      sessionUpdate: 'tool_call_update',
      toolCallId: edit,
      status: 'completed',
      content: [{ type: 'diff', path: `/project/src/file-${i}.ts`, oldText: diffText(i, false), newText: diffText(i, true) }]
    }),
    update({ sessionUpdate: 'tool_call', toolCallId: run, title: `npm test -- file-${i}`, kind: 'execute', status: 'in_progress' }),
    update({
      sessionUpdate: 'tool_call_update',
      toolCallId: run,
      status: 'completed',
      content: [{ type: 'content', content: { type: 'text', text: terminalText(i) } }]
    }),
    ...reply.map((text) => update({ sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text } })),
    { t: 'stop', at, stopReason: 'end_turn' }
  ]
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/**
 * The bare page: the same text as `turns` turns of `longTurn`, as static
 * paragraphs and preformatted blocks in one scrolling box the size of the
 * thread's, no script, no framework. What scrolling that text costs the
 * browser alone, the floor a thread's frames are held to.
 */
export function barePage(turns: number): string {
  const parts: string[] = [
    '<!doctype html><html><head><meta charset="utf-8"><style>',
    'body{margin:0;font:14px/1.5 system-ui,sans-serif}#s{height:100vh;overflow-y:auto}',
    '.e{margin:12px 20px}pre{font:12px/1.4 monospace;white-space:pre-wrap;margin:0;padding:8px;background:#f4f4f4}',
    '</style></head><body><div id="s" data-testid="bare">'
  ]
  for (let i = 0; i < turns; i++) {
    for (const record of longTurn(i, '')) {
      if (record.t === 'prompt') parts.push(`<p class="e"><b>${escape((record.content[0] as { text: string }).text)}</b></p>`)
      if (record.t !== 'update') continue
      const u = record.update as unknown as Record<string, unknown>
      if (u.sessionUpdate === 'tool_call') parts.push(`<p class="e">${escape(String(u.title))}</p>`)
      if (u.sessionUpdate === 'agent_thought_chunk' || u.sessionUpdate === 'agent_message_chunk') {
        parts.push(`<p class="e">${escape((u.content as { text: string }).text)}</p>`)
      }
      const blocks = Array.isArray(u.content) ? (u.content as { type: string; content?: { text: string }; newText?: string }[]) : []
      for (const block of blocks) {
        const text = block.type === 'diff' ? block.newText : block.content?.text
        if (text) parts.push(`<pre class="e">${escape(text)}</pre>`)
      }
    }
  }
  parts.push('</div></body></html>')
  return parts.join('\n')
}

/** Appends the long day's turns to a transcript until it holds about `entries` more entries; returns the turns appended. */
export async function appendLongTurns(file: string, entries: number, at = new Date().toISOString()): Promise<number> {
  const turns = Math.round(entries / LONG_ENTRIES_PER_TURN)
  for (let from = 0; from < turns; from += 1_000) {
    const lines: string[] = []
    for (let i = from; i < Math.min(turns, from + 1_000); i++) for (const r of longTurn(i, at)) lines.push(JSON.stringify(r))
    await appendFile(file, lines.join('\n') + '\n')
  }
  return turns
}
