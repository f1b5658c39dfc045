import { mkdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { scriptedTransport } from '../test/agent/spawn'
import { agentEnv } from './agents'
import { withTempDir, type Figure } from './lib'
import { appendLongTurns, longTurn } from './long-data'
import { rssMb, searchComplete, startServe, untilQuiet, type Served } from './processes'

/**
 * The seed's memory (issue 40, goal 1), BENCH_ONLY=seed-memory: the Host's RSS
 * while it hands a conversation over to another session ("Continue with…")
 * and while it edits and resends its last message (a new session given the
 * conversation before it), for a conversation of 100,000 entries against one
 * of 100. The Host is the process serve.js forks (processes.ts), read every
 * 100 ms from /proc; each run starts a fresh Host and waits for its search
 * index to be read in (loaded: a Host before the runs read the long day into it
 * and saved it, as a user's first start after that day does) and for the
 * Host to hand back that load's garbage (quiet for 2 s: `untilQuiet`) before the
 * Host's RSS is taken as idle. The figure is the peak over the idle Host
 * against the 100-entry rise over the same idle Host (the large Host's idle
 * holds its conversation's text in the search index: that is goal 2's figure,
 * the index's memory per session, not this one's).
 */

type Add = (figure: Omit<Figure, 'median' | 'min' | 'max' | 'runs'>, samples: number[]) => Figure

export interface Conversation {
  entries: number
  dataDir: string
  sessionId: string
  agentId: string
  /** The line of its last prompt (the message edited). */
  lastPrompt: number
  fileMb: number
}

interface Rise {
  idleMb: number
  riseMb: number[]
  /** Request to answer, each run (ms). */
  ms: number[]
}

const ACTIONS = {
  'hand-off': 'a hand-off (the seed of the whole conversation)',
  'edit-resend': 'an edit and resend of its last message (the seed of the conversation before it)'
} as const

export async function seedMemoryFigures(add: Add, quick: boolean): Promise<void> {
  const sizes = [100, quick ? 10_000 : 100_000]
  await withTempDir('seed-memory', async (root) => {
    const conversations: Conversation[] = []
    for (const entries of sizes) conversations.push(await longConversation(root, entries))
    for (const action of Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]) {
      const [small, large] = [await rise(conversations[0], action), await rise(conversations[1], action)]
      const base = add({ group: '5', name: `${action}: Host RSS rise, 100 entries (baseline)`, unit: 'MB', size: 100 }, small.riseMb)
      base.ratio = 1
      base.baseline = '100 entries'
      const big = conversations[1]
      const figure = add({ group: '5', name: `${action}: Host RSS rise during ${ACTIONS[action]}`, unit: 'MB', size: big.entries }, large.riseMb)
      // Against the same idle Host: the large one's idle already holds its conversation in the search index (not this figure's).
      figure.ratio = (figure.median + large.idleMb) / (base.median + large.idleMb)
      figure.baseline = `the rise with 100 entries, on the same idle Host (peak to peak)`
      figure.goal = 'flat in the conversation’s size: peak ≤ 1.3 × the 100-entry one'
      figure.met = figure.ratio <= 1.3
      figure.note = `idle ${large.idleMb.toFixed(0)} MB, peak ${(large.idleMb + figure.median).toFixed(0)} MB, transcript ${big.fileMb.toFixed(0)} MB`
      // What the user waits for: the request to its answer (the new session made, its first prompt sent).
      const shortAnswer = add({ group: '5', name: `${action}: request to answer, 100 entries (baseline)`, unit: 'ms', size: 100 }, small.ms)
      shortAnswer.ratio = 1
      shortAnswer.baseline = '100 entries'
      const longAnswer = add({ group: '5', name: `${action}: request to answer`, unit: 'ms', size: big.entries }, large.ms)
      longAnswer.ratio = longAnswer.median / shortAnswer.median
      longAnswer.baseline = '100 entries'
    }
  })
}

/** A session of the scripted agent whose transcript is then made `entries` long (the long day of long-data.ts). */
export async function longConversation(root: string, entries: number): Promise<Conversation> {
  const dataDir = join(root, `data-${entries}`)
  const project = join(root, `project-${entries}`)
  await mkdir(project, { recursive: true })
  const served = await startServe(dataDir)
  let sessionId: string
  let agentId: string
  try {
    const projectId = (await served.confirmed<{ id: string }>('projects.add', { cwd: project })).id
    agentId = (
      await served.confirmed<{ id: string }>('agents.add', {
        name: 'Scripted',
        transport: scriptedTransport(agentEnv(join(root, `agent-state-${entries}`)))
      })
    ).id
    sessionId = (await served.confirmed<{ id: string }>('sessions.new', { projectId, agentId })).id
    await served.confirmed('sessions.prompt', { id: sessionId, text: 'the first question' })
  } finally {
    await served.close()
  }
  const file = join(dataDir, 'transcripts', `${sessionId}.jsonl`)
  const linesBefore = (await readFile(file, 'utf8')).split('\n').length - 1
  const at = new Date().toISOString()
  const turns = await appendLongTurns(file, entries, at)
  // Each turn opens with its prompt.
  const lastPrompt = linesBefore + (turns - 1) * longTurn(0, at).length
  // The search index reads the long day once and keeps it (saved as this Host closes): the Hosts measured load it,
  // as every start after the one that first meets a transcript does, rather than each carrying that read's garbage.
  const indexing = await startServe(dataDir)
  try {
    await searchComplete(indexing)
  } finally {
    await indexing.close()
  }
  return { entries, dataDir, sessionId, agentId, lastPrompt, fileMb: (await stat(file)).size / 1024 / 1024 }
}

/** The Host's RSS rise while it does `action` on the conversation, twice, each on a Host just started. */
async function rise(conversation: Conversation, action: keyof typeof ACTIONS): Promise<Rise> {
  const riseMb: number[] = []
  const ms: number[] = []
  let idleMb = 0
  for (let run = 0; run < (Number(process.env.BENCH_SEED_RUNS) || 1); run++) {
    const served = await startServe(conversation.dataDir)
    try {
      // The Host reads the search index after it opens: measured once that is done and the Host has handed back that
      // read's garbage (~80 MB at 100,000 entries), as a user's Host has a few seconds after it starts: once quiet for
      // 2 s (untilQuiet), which it is only after its quiet collector's look, 15 s at most. Read 1 s after the index,
      // the idle Host still held it and the figure was whether a full collection fell inside the resend (rise 0–4 MB
      // or +95 MB), not what the resend costs; a fixed 5 s until issue 40's eighteenth round (docs/BENCHMARKS.md, item 5).
      await searchComplete(served)
      const indexed = Date.now()
      const quiet = await untilQuiet(served.host)
      console.error(
        `  seed-memory, ${action} ${conversation.entries}: ${quiet ? 'quiet' : 'not quiet (read anyway)'} ${((Date.now() - indexed) / 1000).toFixed(1)} s after its index`
      )
      const idle = rssMb(served.host)
      if (run === 0) idleMb = idle
      const started = performance.now()
      const peak = await peakWhile(served, () => act(served, conversation, action))
      ms.push(performance.now() - started)
      riseMb.push(Math.max(idle, peak) - idle)
    } finally {
      await served.close()
    }
  }
  return { idleMb, riseMb, ms }
}

function act(served: Served, { sessionId, agentId, lastPrompt }: Conversation, action: keyof typeof ACTIONS): Promise<unknown> {
  return action === 'hand-off'
    ? served.confirmed('sessions.handOff', { id: sessionId, agentId })
    : served.confirmed('sessions.editResend', { id: sessionId, seq: lastPrompt, text: 'the last question, again', conversationOnly: true })
}

/** The Host's peak RSS (MB), read every 100 ms while `work` runs. */
async function peakWhile(served: Served, work: () => Promise<unknown>): Promise<number> {
  let peak = rssMb(served.host)
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(served.host))), 100)
  try {
    await work()
  } finally {
    clearInterval(timer)
  }
  return Math.max(peak, rssMb(served.host))
}
