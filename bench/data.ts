import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { SPEND_FILE } from '../electron/host/spend/book'
import { PRIVATE_FILE_MODE, privateFolder, TREE_MADE_PRIVATE } from '../electron/host/storage/private-files'
import { Store } from '../electron/host/storage/store'
import { transcriptPath } from '../electron/host/storage/transcripts'
import type { SessionRecord } from '../shared/domain'
import type { TranscriptHeader, TranscriptRecord } from '../shared/transcript'
import { scriptedAgentCommand } from '../test/agent/spawn'

/**
 * Data folders of a given size, written the way the app writes them (Store for db.json, JSONL transcripts), and left
 * as a Host of this version leaves them: folders 0700, files 0600 and the mark of the tree made private, which a
 * data folder has from its first start on. Without the mark each folder's first start walked the whole tree (an
 * lstat per file: 3.8 s at 100,000 sessions, private-files.ts; 4 s against 13–20 s for a first start right after
 * the seed at load 15) after every seed and every lend (seeds.ts).
 */

const WORDS = 'agent session project stream transcript render listing search index thread entry tool diff plan terminal permission'.split(' ')

function sentence(i: number, words = 12): string {
  return Array.from({ length: words }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ')
}

/** A turn's worth of records: prompt, a tool call with a diff, streamed reply, stop. */
function turnRecords(i: number, at: string): TranscriptRecord[] {
  const messageId = `m-${i}`
  const toolCallId = `t-${i}`
  return [
    { t: 'prompt', at, content: [{ type: 'text', text: `Question ${i}: ${sentence(i, 8)}` }] },
    { t: 'update', at, update: { sessionUpdate: 'tool_call', toolCallId, title: `Edit src/file-${i}.ts`, kind: 'edit', status: 'in_progress' } },
    {
      t: 'update',
      at,
      update: {
        sessionUpdate: 'tool_call_update',
        toolCallId,
        status: 'completed',
        content: [
          {
            type: 'diff',
            path: `/project/src/file-${i}.ts`,
            oldText: Array.from({ length: 12 }, (_, k) => `const value${k} = ${k}`).join('\n'),
            newText: Array.from({ length: 12 }, (_, k) => `const value${k} = ${k === 5 ? i : k}`).join('\n')
          }
        ]
      }
    },
    {
      t: 'update',
      at,
      update: { sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text: `Answer ${i}: ${sentence(i)}. ` } }
    },
    {
      t: 'update',
      at,
      update: { sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text: '```ts\nexport const x = ' + i + '\n```\n' } }
    },
    { t: 'stop', at, stopReason: 'end_turn' }
  ]
}

/** Thread entries a turn makes (user, tool call, assistant, stop). */
export const ENTRIES_PER_TURN = 4

export interface Dataset {
  dataDir: string
  /** The session with the long transcript, if one was asked for. */
  longSessionTitle?: string
  /** The ids of the long sessions (`longSessions` of them, the first `s-long`). */
  longSessionIds: string[]
  /** A phrase that occurs once, in the long transcript's last turn. */
  marker: string
}

/**
 * `sessions` session records across `projects` projects (each session with a
 * short transcript of `turnsPerSession` turns), plus optionally one session
 * with `longTurns` turns (or `longSessions` of them).
 */
export async function makeDataset(
  root: string,
  options: {
    projects: number
    sessions: number
    turnsPerSession: number
    longTurns?: number
    longSessions?: number
    /** The long session's turns, when not the usual ones. */
    longTurn?: (i: number, at: string) => TranscriptRecord[]
  }
): Promise<Dataset> {
  const dataDir = join(root, 'data')
  const transcripts = join(dataDir, 'transcripts')
  await privateFolder(transcripts)
  const { store } = await Store.open(dataDir, [])
  const { command, args } = scriptedAgentCommand()
  const agentId = 'bench-agent'
  store.data.agents.push({
    id: agentId,
    name: 'Scripted A',
    transport: { kind: 'process', command, args, env: { SCRIPTED_AGENT_CHUNK_DELAY_MS: '0' } }
  })
  const base = Date.parse('2026-01-01T00:00:00Z')
  for (let p = 0; p < options.projects; p++) {
    const cwd = join(root, 'projects', `project-${p}`)
    await mkdir(cwd, { recursive: true })
    store.data.projects.push({ id: `project-${p}`, name: `project-${p}`, cwd, createdAt: new Date(base).toISOString() })
  }
  const marker = `needle-${randomUUID().slice(0, 8)}`
  const write = (record: SessionRecord, turns: number, last?: string, turn = turnRecords): void => {
    const header: TranscriptHeader = {
      t: 'header',
      v: 2,
      id: record.id,
      acpSessionId: record.acpSessionId ?? '',
      agentId,
      projectId: record.projectId,
      cwd: record.cwd,
      createdAt: record.createdAt
    }
    const lines = [JSON.stringify(header)]
    for (let i = 0; i < turns; i++) for (const r of turn(i, record.updatedAt)) lines.push(JSON.stringify(r))
    if (last) {
      lines.push(
        JSON.stringify({ t: 'prompt', at: record.updatedAt, content: [{ type: 'text', text: 'the last question' }] } satisfies TranscriptRecord)
      )
      lines.push(
        JSON.stringify({
          t: 'update',
          at: record.updatedAt,
          update: { sessionUpdate: 'agent_message_chunk', messageId: 'last', content: { type: 'text', text: `the final answer ${last}` } }
        } satisfies TranscriptRecord)
      )
    }
    writeFileSync(transcriptPath(transcripts, record.id), lines.join('\n') + '\n', { mode: PRIVATE_FILE_MODE })
  }
  const records: SessionRecord[] = []
  // Each transcript written at once (writeFileSync): 100,000 small files go faster so than through the thread pool a
  // few hundred at a time (the seed of 100,000 sessions 8–12 s, was 30–32 s, side by side at load 10–12).
  for (let s = 0; s < options.sessions; s++) {
    const p = s % options.projects
    const at = new Date(base + s * 60_000).toISOString()
    const record: SessionRecord = {
      id: `s-${s}`,
      acpSessionId: `acp-${s}`,
      agentId,
      projectId: `project-${p}`,
      cwd: store.data.projects[p].cwd,
      title: `Session ${s}: ${sentence(s, 4)}`,
      titleSource: 'prompt',
      createdAt: at,
      updatedAt: at
    }
    records.push(record)
    write(record, options.turnsPerSession)
  }
  let longSessionTitle: string | undefined
  const longSessionIds: string[] = []
  if (options.longTurns) {
    longSessionTitle = `The long conversation (${options.longTurns} turns)`
    for (let n = 0; n < (options.longSessions ?? 1); n++) {
      const at = new Date(base + (options.sessions + 1 + n) * 60_000).toISOString()
      const record: SessionRecord = {
        id: n === 0 ? 's-long' : `s-long-${n + 1}`,
        acpSessionId: n === 0 ? 'acp-long' : `acp-long-${n + 1}`,
        agentId,
        projectId: 'project-0',
        cwd: store.data.projects[0].cwd,
        title: n === 0 ? longSessionTitle : `${longSessionTitle} #${n + 1}`,
        titleSource: 'prompt',
        createdAt: at,
        updatedAt: at
      }
      records.push(record)
      longSessionIds.push(record.id)
      write(record, options.longTurns, marker, options.longTurn)
    }
  }
  store.data.sessions.push(...records)
  await store.save()
  // A data folder the app has used holds its spend book: without one, the Host's first start reads every transcript
  // for past spend once it is quiet (at 10,000 sessions, through the listing's, the idle figure's and the index's
  // seconds, in the same process): a first start after an update, not the steady state the figures are about.
  const book = { t: 'header', v: 1, createdAt: new Date().toISOString(), backfilled: records.length }
  writeFileSync(join(dataDir, SPEND_FILE), JSON.stringify(book) + '\n', { mode: PRIVATE_FILE_MODE })
  writeFileSync(join(dataDir, TREE_MADE_PRIVATE), `${new Date().toISOString()}\n`, { mode: PRIVATE_FILE_MODE })
  return { dataDir, longSessionTitle, longSessionIds, marker }
}
