import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import type { PendingPermission } from '../../shared/domain'
import type { TranscriptRecord } from '../../shared/transcript'
import { waitUntil } from '../helpers'
import { addClaudeAgent, offlineClaudePerTest } from '../real/claude'

/**
 * "Always" with real Claude Code (claude-agent-acp, offline against the fake
 * of Anthropic's API, as in real-claude.test.ts). Claude Code's own options
 * are broad ("Always Allow all Edit", "Always Allow access to <folder>",
 * "Always Allow Bash(node -e:*)"), Edit and Write share the kind `edit` and
 * every command the kind `execute`, and it writes files itself: the rule the
 * user makes must cover exactly the tool and command, or files inside the
 * project, and be answered with Claude Code's "Allow" (once), so Claude Code
 * keeps no broader rule of its own and asks again next time.
 */

const run = offlineClaudePerTest('claude-rules')
let outside: string
let projectId: string

beforeEach(async () => {
  outside = join(run.root, 'outside')
  await mkdir(outside)
})

async function newSession(): Promise<string> {
  const agentId = await addClaudeAgent(run)
  projectId = (await run.host.request('projects.add', { cwd: run.project })).id
  return (await run.host.request('sessions.new', { projectId, agentId })).id
}

/**
 * Runs a prompt; each permission request shown is answered with what
 * `decide` picks (by option kind). Returns the requests shown, in order.
 */
async function turn(
  id: string,
  text: string,
  decide: (p: PendingPermission) => 'allow_always' | 'allow_once' | 'reject_once'
): Promise<PendingPermission[]> {
  const running = run.host.request('sessions.prompt', { id, text })
  let ended = false
  void running.then(
    () => (ended = true),
    () => (ended = true)
  )
  const shown: PendingPermission[] = []
  for (;;) {
    const next = await waitUntil(
      'Claude Code to ask, or the turn to end',
      async () => {
        if (ended) return 'ended' as const
        const state = (await run.host.request('sessions.states', {})).find((s) => s.id === id)
        return state?.permissions?.find((p) => !shown.some((s) => s.requestId === p.requestId)) ?? null
      },
      { timeoutMs: 60_000 }
    )
    if (next === 'ended') break
    shown.push(next)
    const kind = decide(next)
    const option = next.options.find((o) => o.kind === kind)
    expect(option, `a ${kind} option for “${next.title}” among ${next.options.map((o) => o.kind).join(', ')}`).toBeTruthy()
    await run.host.request('sessions.respondPermission', { id, requestId: next.requestId, optionId: option!.optionId })
  }
  expect((await running).stopReason).toBe('end_turn')
  return shown
}

/** The transcript's permission records: what was sent to Claude Code for each request, in order. */
async function answers(id: string): Promise<Extract<TranscriptRecord, { t: 'permission' }>[]> {
  const { records } = await run.host.request('sessions.open', { id })
  return records.filter((r): r is Extract<TranscriptRecord, { t: 'permission' }> => r.t === 'permission')
}

const never = (p: PendingPermission): never => {
  throw new Error(`asked unexpectedly: ${p.title}`)
}

describe('"always" with real Claude Code', () => {
  it('"Always" on an Edit inside covers Edit on files inside only: a Write or an Edit outside the project is asked, and not written unless allowed', async () => {
    const id = await newSession()
    const notes = join(run.project, 'notes.md')
    const other = join(run.project, 'other.md')
    const secret = join(outside, 'secret.md')
    await writeFile(notes, 'old line\n')
    await writeFile(other, 'old line\n')
    await writeFile(secret, 'old line\n')

    // Claude Code offers "Yes, allow all edits during this session" for the Edit; the card says what Switchboard will remember instead.
    const [edit] = await turn(id, `EDIT ${notes} old line => new line`, () => 'allow_always')
    expect(edit.title).toBe('Edit notes.md')
    expect(edit.options.find((o) => o.kind === 'allow_always')?.name).toBe('Yes, allow all edits during this session')
    expect(edit.always).toMatchObject({
      remembered: true,
      tool: 'Edit',
      toolKind: 'edit',
      scope: { kind: 'files' },
      description: 'Edit on any file inside project'
    })
    expect(await readFile(notes, 'utf8')).toBe('new line\n')
    // Claude Code was told "allow-once" (its once option), not its "always".
    expect((await answers(id)).at(-1)).toMatchObject({ optionId: 'allow-once', optionKind: 'allow_always', remembered: false })

    // A Write outside the project (Claude Code offers "Always Allow access to <folder>"): asked, and not written when refused.
    const evil = join(outside, 'evil.txt')
    const wrote = await turn(id, `WRITE ${evil} pwned`, () => 'reject_once')
    expect(wrote.map((p) => p.title)).toEqual([`Write ${evil}`])
    expect(wrote[0].options.map((o) => o.kind)).not.toContain('allow_always')
    expect(wrote[0].always).toMatchObject({ remembered: false, reason: expect.stringContaining(evil) })
    expect(existsSync(evil)).toBe(false)

    // Another file inside: Claude Code asks again (it kept no rule of its own), and the rule answers "allow" without showing it.
    expect(await turn(id, `EDIT ${other} old line => new line`, never)).toEqual([])
    expect(await readFile(other, 'utf8')).toBe('new line\n')
    expect((await answers(id)).at(-1)).toMatchObject({
      title: 'Edit other.md',
      optionId: 'allow-once',
      remembered: true,
      rule: 'Edit on any file inside project'
    })

    // An Edit outside the project, with the Edit rule in place: asked (reading it may be asked too), and left alone when refused.
    const outsideAsked = await turn(id, `EDIT ${secret} old line => pwned`, (p) => (p.title.startsWith('Read') ? 'allow_once' : 'reject_once'))
    expect(outsideAsked.map((p) => p.title).filter((t) => t.startsWith('Edit'))).toEqual([`Edit ${secret}`])
    expect(await readFile(secret, 'utf8')).toBe('old line\n')

    // Claude Code offered it "during this session": it stays that (issue 34.3), kept for this session only, never saved.
    expect(await run.host.request('permissions.list', { projectId })).toEqual([])
  }, 240_000)

  it('"Always" on one command covers that command only; the same command again is answered "allow" once; revoked, it is asked again', async () => {
    const id = await newSession()
    const first = `node -e "require('fs').appendFileSync('first.txt', 'x')"`
    const second = `node -e "require('fs').writeFileSync('second.txt', 'pwned')"`

    const [asked] = await turn(id, `BASH ${first}`, () => 'allow_always')
    expect(asked.title).toBe(first)
    expect(asked.always).toMatchObject({ remembered: true, tool: 'Bash', toolKind: 'execute', scope: { kind: 'command', command: first } })
    expect(await readFile(join(run.project, 'first.txt'), 'utf8')).toBe('x')
    expect((await answers(id)).at(-1)).toMatchObject({
      optionId: 'allow-once',
      remembered: false,
      rule: `running “${first}” with Bash (that exact command only)`
    })

    // Another node -e command: asked, and it does not run when refused.
    expect((await turn(id, `BASH ${second}`, () => 'reject_once')).map((p) => p.title)).toEqual([second])
    expect(existsSync(join(run.project, 'second.txt'))).toBe(false)

    // The same command again: Claude Code asks (it kept no "Bash(node -e:*)" of its own); answered with its once option.
    expect(await turn(id, `BASH ${first}`, never)).toEqual([])
    expect(await readFile(join(run.project, 'first.txt'), 'utf8')).toBe('xx')
    expect((await answers(id)).at(-1)).toMatchObject({ title: first, optionId: 'allow-once', optionKind: 'allow_once', remembered: true })

    // The rule list shows the command; revoked, the command is asked again.
    const rules = await run.host.request('permissions.list', { projectId })
    expect(rules).toMatchObject([{ tool: 'Bash', scope: { kind: 'command', command: first }, decision: 'allow' }])
    await run.host.request('permissions.revoke', { ruleId: rules[0].id })
    expect((await turn(id, `BASH ${first}`, () => 'reject_once')).map((p) => p.title)).toEqual([first])
    expect(await readFile(join(run.project, 'first.txt'), 'utf8')).toBe('xx')
  }, 240_000)
})
