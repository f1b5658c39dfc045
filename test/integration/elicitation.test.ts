import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { PendingElicitation } from '../../shared/domain'
import { entriesOf, fold, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/** elicitation/create: an agent asks the user for structured input (a form or a page to open). */

let root: string
let host: Host
let projectId: string
let agentId: string

beforeEach(async () => {
  root = await tempDir('elicitation')
  await mkdir(join(root, 'project'))
  host = await openHost(join(root, 'data'))
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state')))).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

/** The question the agent is waiting on, once it has asked. */
async function asked(): Promise<PendingElicitation> {
  for (;;) {
    const [pending] = await host.request('elicitations.list', {})
    if (pending) return pending
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function lastMessage(id: string): Promise<string> {
  const thread = fold((await host.request('sessions.open', { id })).records)
  return (entriesOf(thread, 'assistant').at(-1) as { text: string }).text
}

describe('elicitation', () => {
  it('shows the form the agent sends, refuses an answer that does not fit it, and sends back one that does', async () => {
    const record = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: record.id, text: '/elicit' })
    const question = await asked()
    expect(question).toMatchObject({ agentId, sessionId: record.id, mode: 'form', message: 'Which deployment should I use?', title: 'Deployment' })
    expect(question.fields).toEqual([
      {
        name: 'target',
        title: 'Target',
        type: 'select',
        required: true,
        options: [
          { value: 'staging', label: 'Staging' },
          { value: 'production', label: 'Production' }
        ]
      },
      { name: 'replicas', title: 'Replicas', type: 'integer', required: true, default: 2, minimum: 1, maximum: 10 },
      { name: 'contact', title: 'Contact email', type: 'string', required: false, format: 'email' },
      { name: 'dryRun', title: 'Dry run first', type: 'boolean', required: false, default: true },
      {
        name: 'regions',
        title: 'Regions',
        type: 'multiselect',
        required: true,
        minItems: 1,
        options: ['eu', 'us', 'asia'].map((v) => ({ value: v, label: v }))
      }
    ])

    const answer = (content: Record<string, unknown>) =>
      host.handle('elicitations.answer', { requestId: question.requestId, action: 'accept', content })
    expect(await answer({ replicas: 2, regions: ['eu'] })).toMatchObject({ ok: false, error: { message: 'Target is required' } })
    expect(await answer({ target: 'staging', replicas: 11, regions: ['eu'] })).toMatchObject({
      ok: false,
      error: { message: 'Replicas must be at most 10' }
    })
    expect(await answer({ target: 'staging', replicas: 1.5, regions: ['eu'] })).toMatchObject({
      error: { message: 'Replicas must be a whole number' }
    })
    expect(await answer({ target: 'qa', replicas: 2, regions: ['eu'] })).toMatchObject({ error: { message: 'Target must be one of the choices' } })
    expect(await answer({ target: 'staging', replicas: 2, regions: ['mars'] })).toMatchObject({
      error: { message: 'Regions must be among the choices' }
    })
    expect(await answer({ target: 'staging', replicas: 2, regions: ['eu'], contact: 'nobody' })).toMatchObject({
      error: { message: 'Contact email must be an email address' }
    })
    expect(await answer({ target: 'staging', replicas: 2, regions: ['eu'], extra: 1 })).toMatchObject({
      error: { message: "The form has no field 'extra'" }
    })
    // Still waiting after refused answers.
    expect(await host.request('elicitations.list', {})).toHaveLength(1)

    expect(await answer({ target: 'production', replicas: 3, regions: ['eu', 'us'], dryRun: false, contact: 'ops@example.com' })).toEqual({
      ok: true,
      result: {}
    })
    expect((await turn).stopReason).toBe('end_turn')
    expect(await lastMessage(record.id)).toBe(
      'elicitation: accept {"target":"production","replicas":3,"contact":"ops@example.com","dryRun":false,"regions":["eu","us"]}'
    )
    expect(await host.request('elicitations.list', {})).toEqual([])
    // The thread keeps what was asked and answered.
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'elicitation')).toMatchObject([
      { message: 'Which deployment should I use?', action: 'accept', content: { target: 'production', replicas: 3 } }
    ])
  })

  it('sends decline when the user declines, and cancel when the turn is cancelled while it waits', async () => {
    const record = await host.request('sessions.new', { projectId, agentId })
    const declined = host.request('sessions.prompt', { id: record.id, text: '/elicit' })
    await host.request('elicitations.answer', { requestId: (await asked()).requestId, action: 'decline' })
    await declined
    expect(await lastMessage(record.id)).toBe('elicitation: decline')

    const cancelled = host.request('sessions.prompt', { id: record.id, text: '/elicit\n/say after' })
    const question = await asked()
    await host.request('sessions.cancel', { id: record.id })
    expect((await cancelled).stopReason).toBe('cancelled')
    expect(await host.request('elicitations.list', {})).toEqual([])
    expect(await host.handle('elicitations.answer', { requestId: question.requestId, action: 'accept' })).toMatchObject({
      ok: false,
      error: { message: 'That question is no longer waiting for an answer' }
    })
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'elicitation').map((e) => (e as { action: string }).action)).toEqual(['decline', 'cancel'])
  })

  it('asks to open a page in URL mode and tells the agent when the user agrees', async () => {
    const record = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: record.id, text: '/elicit-url https://example.com/oauth' })
    const question = await asked()
    expect(question).toMatchObject({ mode: 'url', url: 'https://example.com/oauth', message: 'Connect your account to continue', fields: [] })
    await host.request('elicitations.answer', { requestId: question.requestId, action: 'accept' })
    await turn
    expect(await lastMessage(record.id)).toBe('elicitation: accept')

    // A page that is not http(s) is refused before it reaches the user.
    await host.request('sessions.prompt', { id: record.id, text: '/elicit-url javascript:alert(1)' })
    expect(await host.request('elicitations.list', {})).toEqual([])
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(JSON.stringify(thread.entries)).toContain('Only http(s) URLs can be opened')
    // Not a URL at all: refused before anyone is asked.
    await host.request('sessions.prompt', { id: record.id, text: '/elicit-url not a url' })
    expect(await lastMessage(record.id)).toMatch(/^elicit failed: /)
    expect(await host.request('elicitations.list', {})).toEqual([])
  })

  it('works the same over ACP protocol version 2', async () => {
    const v2Agent = (
      await host.request('agents.add', { ...scriptedAgent(join(root, 'state-v2'), { SCRIPTED_AGENT_V2: '1' }, 'Scripted v2'), protocol: 2 })
    ).id
    const record = await host.request('sessions.new', { projectId, agentId: v2Agent })
    expect((await host.request('agents.states', {})).find((s) => s.agentId === v2Agent)?.protocolVersion).toBe(2)
    const turn = host.request('sessions.prompt', { id: record.id, text: '/elicit' })
    const question = await asked()
    expect(question).toMatchObject({ agentId: v2Agent, sessionId: record.id, mode: 'form' })
    await host.request('elicitations.answer', {
      requestId: question.requestId,
      action: 'accept',
      content: { target: 'staging', replicas: 1, regions: ['asia'] }
    })
    await turn
    await expect.poll(() => lastMessage(record.id)).toBe('elicitation: accept {"target":"staging","replicas":1,"regions":["asia"]}')
  })
})
