import { existsSync } from 'node:fs'
import { link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HostEvent } from '../../shared/contract'
import type { PendingPermission } from '../../shared/domain'
import type { ThreadEntry } from '../../shared/thread'
import type { Host } from '../../electron/host/host'
import { DB_VERSION } from '../../electron/host/storage/store'
import { entriesOf, fold, openHost, readDbJson, recordEvents, removeDir, scriptedAgent, tempDir, waitForState, waitUntil } from '../helpers'

/**
 * session/request_permission: asked inline; an "always" answer becomes
 * Switchboard's rule for one agent, project and tool, with one exact command
 * or files inside the project's folders, answered with the agent's "once"
 * option; a path outside the project is always asked; rules are revocable.
 *
 * A pending request is awaited from the Host's session.state events (waitForState), not by polling sessions.open
 * every 20 ms (each call writes the transcript out and reads it whole). CPU (user+sys, the file alone, this 2-core
 * machine shared with three benches, load 13-21): 77.1 s before, 68.1 s after, one after the other; 70.3 s and
 * 68.7 s run side by side (wall 406 and 396 s). Where the rest goes (a sampling of the run's processes): the vitest
 * worker (Host and test) 28 s, the scripted agents 14 s (one started per test: 22 Hosts and agents; one shared per
 * file was not tried in this round), vitest's own process 9 s.
 */

let root: string
let dataDir: string
let host: Host
let events: HostEvent[]
let projectId: string
let agentId: string
let project: string

beforeEach(async () => {
  root = await tempDir('permissions')
  dataDir = join(root, 'data')
  project = join(root, 'project')
  await mkdir(project)
  host = await openHost(dataDir)
  events = recordEvents(host)
  projectId = (await host.request('projects.add', { cwd: project })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state')))).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

/** Runs a prompt, answering the permission request it raises (if any) with `optionId`; returns the agent's last message and the request shown. */
async function promptAsking(id: string, text: string, optionId: string | null): Promise<{ said: string; asked: PendingPermission | null }> {
  const turn = host.request('sessions.prompt', { id, text })
  // The turn may end without asking (a remembered answer): then there is nothing to answer.
  const ended = turn.then(
    () => 'ended' as const,
    () => 'ended' as const
  )
  const permission = await waitForState(host, id, 'the permission request or the end of the turn', (state) => state.permissions?.[0], { or: ended })
  if (permission !== 'ended') await host.request('sessions.respondPermission', { id, requestId: permission.requestId, optionId })
  await turn
  const thread = fold((await host.request('sessions.open', { id })).records)
  return { said: (entriesOf(thread, 'assistant').at(-1) as { text: string }).text, asked: permission === 'ended' ? null : permission }
}

async function promptAnswering(id: string, text: string, optionId: string | null): Promise<string> {
  return (await promptAsking(id, text, optionId)).said
}

/** A `/permission-call` prompt: a tool call as Claude Code describes one. */
function call(spec: Record<string, unknown>): string {
  return `/permission-call ${JSON.stringify(spec)}`
}

const edit = (file: string, extra: Record<string, unknown> = {}): string =>
  call({
    tool: 'Edit',
    kind: 'edit',
    title: `Edit ${file}`,
    locations: [file],
    rawInput: { file_path: file, old_string: 'a', new_string: 'b' },
    ...extra
  })
const write = (file: string): string =>
  call({ tool: 'Write', kind: 'edit', title: `Write ${file}`, locations: [file], rawInput: { file_path: file, content: 'x' } })
const bash = (command: string, extra: Record<string, unknown> = {}): string =>
  call({ tool: 'Bash', kind: 'execute', title: command, rawInput: { command, description: 'run it' }, ...extra })

async function lastPermissionEntry(id: string): Promise<ThreadEntry | undefined> {
  return entriesOf(fold((await host.request('sessions.open', { id })).records), 'permission').at(-1)
}

describe('permissions', () => {
  it('remembers "always allow" for that command, in that project, for that agent, answered "once", until revoked', async () => {
    const first = await host.request('sessions.new', { projectId, agentId })
    // The user chose "always"; the agent is told "allow" (once): it keeps no rule of its own.
    expect(await promptAnswering(first.id, '/permission-always execute', 'allow-always')).toBe('permission: allow')
    const rules = await host.request('permissions.list', { projectId })
    expect(rules).toMatchObject([
      { agentId, projectId, tool: 'Command', toolKind: 'execute', scope: { kind: 'command', command: 'Run dangerous command' }, decision: 'allow' }
    ])
    expect(await lastPermissionEntry(first.id)).toMatchObject({
      answer: 'Always allow',
      allowed: true,
      remembered: false,
      rule: 'running “Run dangerous command” (that exact command only)'
    })
    host.events.flush()
    expect(events.some((e) => e.type === 'permissions.changed')).toBe(true)

    // Another session of the same agent and project: answered without asking, with the "once" option.
    const second = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: second.id, text: '/permission-always execute' })
    const thread = fold((await host.request('sessions.open', { id: second.id })).records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('permission: allow')
    expect(entriesOf(thread, 'permission')).toMatchObject([
      { answer: 'Allow', allowed: true, remembered: true, rule: 'running “Run dangerous command” (that exact command only)' }
    ])

    // A different kind of tool still asks.
    expect(await promptAnswering(second.id, '/permission-always edit', 'reject')).toBe('permission: reject')

    await host.request('permissions.revoke', { ruleId: rules[0].id })
    expect(await host.request('permissions.list', {})).toEqual([])
    expect(await promptAnswering(second.id, '/permission-always execute', 'reject')).toBe('permission: reject')
  })

  it('remembers "always reject" too, answered with the agent\'s "reject once", and survives a restart', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    expect(await promptAnswering(session.id, '/permission-always execute', 'reject-always')).toBe('permission: reject')
    await host.close()
    host = await openHost(dataDir)
    await host.request('sessions.prompt', { id: session.id, text: '/permission-always execute' })
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('permission: reject')
    expect(entriesOf(thread, 'permission').at(-1)).toMatchObject({ answer: 'Reject', allowed: false, remembered: true })
  })

  it('refuses an option the agent did not offer, and records a dismissal', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/permission' })
    const requestId = await waitForState(host, session.id, 'the permission request', (state) => state.permissions?.[0]?.requestId)
    await expect(host.request('sessions.respondPermission', { id: session.id, requestId, optionId: 'allow-always' })).rejects.toThrow(
      /'allow-always' is not one of the options the agent offered \(allow, reject\)/
    )
    await host.request('sessions.respondPermission', { id: session.id, requestId, optionId: null })
    await turn
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect(entriesOf(thread, 'permission')).toMatchObject([{ answer: 'Dismissed', allowed: false, remembered: false }])
    expect(await host.request('permissions.list', {})).toEqual([])
  })
  it('carries at most 10,000 characters of a megabyte title and 1,000 of an option name, and keeps the whole in the tool call', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const size = 2_000_000
    const turn = host.request('sessions.prompt', { id: session.id, text: `/payload line ${size} in=permission` })
    const asked = await waitForState(host, session.id, 'the permission request', (state) => state.permissions?.[0])
    expect(asked.title).toMatch(/^lorem ipsum .*… \(1,990,000 more characters\)$/)
    expect(asked.title.length).toBeLessThan(10_100)
    expect(asked.options[0].name).toMatch(/… \(999,000 more characters\)$/)
    expect(asked.options[0].name.length).toBeLessThan(1_100)
    // Every change of the session's state carries its pending requests: none of them carries megabytes.
    // Events go out in batches, on the next tick or frame: send what is queued before reading them.
    host.events.flush()
    const states = events.filter((e) => e.type === 'session.state' && JSON.stringify(e.payload).includes('lorem ipsum'))
    expect(states.length).toBeGreaterThan(0)
    expect(Math.max(...states.map((e) => JSON.stringify(e).length))).toBeLessThan(20_000)
    await host.request('sessions.respondPermission', { id: session.id, requestId: asked.requestId, optionId: 'allow' })
    await turn
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect(entriesOf(thread, 'permission')).toMatchObject([{ allowed: true, answer: expect.stringMatching(/… \(999,000 more characters\)$/) }])
    expect((entriesOf(thread, 'permission')[0] as { title: string }).title.length).toBeLessThan(10_100)
    expect((entriesOf(thread, 'tool_call')[0] as { title: string }).title).toHaveLength(size)
  })
})

describe('what "always" covers', () => {
  it('"Always Allow all Edit" on a file inside covers Edit on files inside the project, not Write, not a file outside', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    const notes = join(project, 'notes.md')
    const first = await promptAsking(id, edit(notes), 'allow_always')
    expect(first.said).toBe('permission: allow')
    // The card said what "always" would cover.
    expect(first.asked?.always).toEqual({
      remembered: true,
      tool: 'Edit',
      toolKind: 'edit',
      scope: { kind: 'files' },
      project: 'project',
      description: 'Edit on any file inside project'
    })
    expect(await host.request('permissions.list', { projectId })).toMatchObject([{ tool: 'Edit', toolKind: 'edit', scope: { kind: 'files' } }])

    // Another file inside: answered "once" without asking.
    expect(await promptAsking(id, edit(join(project, 'src', 'other.ts')), null)).toEqual({ said: 'permission: allow', asked: null })
    expect(await lastPermissionEntry(id)).toMatchObject({ remembered: true, answer: 'Allow', rule: 'Edit on any file inside project' })

    // Write has the same kind (edit) but is another tool: asked.
    const wrote = await promptAsking(id, write(join(project, 'fresh.md')), 'reject')
    expect(wrote.asked?.title).toBe(`Write ${join(project, 'fresh.md')}`)
    expect(wrote.said).toBe('permission: reject')

    // Edit of a file outside the project: asked, and "always" is not offered for it.
    const outside = join(root, 'elsewhere', 'secret.txt')
    const asked = await promptAsking(id, edit(outside), 'reject')
    expect(asked.said).toBe('permission: reject')
    expect(asked.asked?.options.map((o) => o.optionId)).toEqual(['allow', 'reject'])
    expect(asked.asked?.always).toEqual({
      remembered: false,
      reason: `it names ${outside}, outside project's folders, so it is asked each time`
    })
  })

  it('asks whenever the request names a path outside the project, wherever it names it', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    await promptAsking(id, edit(join(project, 'a.md')), 'allow_always')
    await mkdir(join(root, 'elsewhere'))
    await symlink(join(root, 'elsewhere'), join(project, 'link'))
    const outside = join(root, 'elsewhere', 'x.md')
    const cases = [
      // Only in rawInput (no location).
      call({ tool: 'Edit', kind: 'edit', title: 'Edit x.md', rawInput: { file_path: outside, old_string: 'a', new_string: 'b' } }),
      // Inside by name, outside once the link is followed.
      edit(join(project, 'link', 'x.md')),
      // Relative, climbing out.
      call({ tool: 'Edit', kind: 'edit', title: 'Edit ../x.md', rawInput: { file_path: '../x.md' } }),
      // The home folder, which the agent expands.
      call({ tool: 'Edit', kind: 'edit', title: 'Edit ~/.bashrc', rawInput: { file_path: '~/.bashrc' } }),
      // A second location outside.
      call({ tool: 'Edit', kind: 'edit', title: 'Edit two', locations: [join(project, 'a.md'), outside] }),
      // Nested in the input.
      call({
        tool: 'Edit',
        kind: 'edit',
        title: 'Edit many',
        rawInput: { edits: [{ file_path: join(project, 'a.md') }, { notebook_path: outside }] }
      })
    ]
    for (const text of cases) {
      const asked = await promptAsking(id, text, 'reject')
      expect(asked.asked, text).not.toBeNull()
      expect(asked.said).toBe('permission: reject')
    }
    // The same tool on a file inside still goes through.
    expect((await promptAsking(id, edit(join(project, 'b.md')), null)).asked).toBeNull()
  })

  it('"always" for one command covers that exact command line only, answered with the agent\'s "once" option', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    const harmless = `node -e "console.log(1)"`
    const first = await promptAsking(id, bash(harmless), 'allow_always')
    expect(first.said).toBe('permission: allow')
    expect(first.asked?.always).toMatchObject({ remembered: true, tool: 'Bash', scope: { kind: 'command', command: harmless } })

    const other = `node -e "require('fs').writeFileSync('/tmp/owned', 'x')"`
    const asked = await promptAsking(id, bash(other), 'reject')
    expect(asked.asked?.title).toBe(other)
    expect(asked.said).toBe('permission: reject')
    // A longer line that starts with the same command is another command.
    expect((await promptAsking(id, bash(`${harmless} && rm -rf ~`), 'reject')).asked).not.toBeNull()

    // The same command again: answered "allow" (the agent's allow_once), not its "always".
    expect(await promptAsking(id, bash(harmless), null)).toEqual({ said: 'permission: allow', asked: null })
    // …unless it is to run in a folder outside the project.
    expect((await promptAsking(id, bash(harmless, { rawInput: { command: harmless, cwd: root } }), 'reject')).asked).not.toBeNull()

    // The tool name may come on the request itself.
    expect(await promptAsking(id, bash(harmless, { onRequest: true }), null)).toEqual({ said: 'permission: allow', asked: null })
    expect(await host.request('permissions.list', { projectId })).toHaveLength(1)
  })

  it('a call announced only after its request (Claude Code does so at times): the card, the rule and the next request go by the tool the announcement names', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    const command = 'npm run lint'
    // The request names no tool (only Claude Code's announcement does); the announcement comes 300 ms after it.
    const late = bash(command, { announceAfterMs: 300 })
    const turn = host.request('sessions.prompt', { id, text: late })
    const named = await waitForState(host, id, 'the card to say what "always" covers by the announced tool', (state) => {
      const asked = state.permissions?.[0]
      return asked?.always?.remembered && asked.always.tool === 'Bash' ? asked : null
    })
    expect(named.always).toMatchObject({ toolKind: 'execute', scope: { kind: 'command', command } })
    await host.request('sessions.respondPermission', { id, requestId: named.requestId, optionId: 'allow_always' })
    await turn
    // The request did come first: the call was shown from it until the agent announced it.
    const { records } = await host.request('sessions.open', { id })
    expect(records.some((r) => r.t === 'update' && JSON.stringify(r.update._meta ?? {}).includes('fromPermissionRequest'))).toBe(true)
    expect(await host.request('permissions.list', { projectId })).toMatchObject([{ tool: 'Bash', scope: { kind: 'command', command } }])

    // Asked again, announced after again: the rule answers once the announcement names the tool; nobody answers here.
    const again = host.request('sessions.prompt', { id, text: late })
    await waitUntil('the rule to answer', async () => ((await lastPermissionEntry(id)) as { remembered?: boolean } | undefined)?.remembered)
    await again
    expect(await lastPermissionEntry(id)).toMatchObject({
      remembered: true,
      answer: 'Allow',
      rule: `running “${command}” with Bash (that exact command only)`
    })
    expect((entriesOf(fold((await host.request('sessions.open', { id })).records), 'assistant').at(-1) as { text: string }).text).toBe(
      'permission: allow'
    )
    expect((await host.request('sessions.open', { id })).state.permissions ?? []).toEqual([])
  })

  it('without a "once" option, a remembered rule does not answer (it asks), and an outside path keeps the agent\'s only "always"', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    const command = 'npm test'
    // Remembered from a request that offered "once"…
    await promptAsking(id, bash(command), 'allow_always')
    // …a request of the same command that offers only "always" is asked: the rule never answers with the agent's "always".
    const asked = await promptAsking(id, bash(command, { options: 'always-only' }), 'reject')
    expect(asked.asked).not.toBeNull()

    // Outside the project with no "once" to give instead: the agent's "always" stays offered, and nothing is remembered.
    const outside = join(root, 'elsewhere', 'x.md')
    const only = await promptAsking(id, edit(outside, { options: 'always-only' }), 'allow_always')
    expect(only.asked?.options.map((o) => o.optionId)).toEqual(['allow_always', 'reject'])
    expect(only.said).toBe('permission: allow_always')
    expect((await host.request('permissions.list', { projectId })).map((r) => r.tool)).toEqual(['Bash'])
  })
})

/** Codex's MCP tool approval as codex-acp sends it: every one titled alike, the server and tool only in its raw input (the elicitation event). */
const codexMcp = (server: string, tool: string, params: Record<string, unknown> = {}): string =>
  call({
    kind: 'other',
    title: 'Approve MCP tool call',
    announced: false,
    rawInput: {
      turn_id: 'turn-1',
      server_name: server,
      id: 'mcp_tool_call_approval_call-1',
      request: {
        mode: 'form',
        _meta: { codex_approval_kind: 'mcp_tool_call', persist: ['session', 'always'], tool_params: params },
        message: `Allow the ${server} MCP server to run tool "${tool}"?`,
        requested_schema: { type: 'object', properties: {} }
      }
    },
    options: [
      { optionId: 'approved', name: 'Allow', kind: 'allow_once' },
      { optionId: 'approved-for-session', name: 'Allow for this session', kind: 'allow_always' },
      { optionId: 'approved-always', name: "Allow and don't ask again", kind: 'allow_always' },
      { optionId: 'cancel', name: 'Cancel', kind: 'reject_once' }
    ]
  })

describe('"always" covers exactly what the card said', () => {
  const outsideFile = (): string => join(root, 'elsewhere', 'secret.txt')
  const cases: [string, (outside: string) => string, RegExp][] = [
    ['no path at all', () => call({ tool: 'Edit', kind: 'edit', title: 'Edit', rawInput: { old_string: 'a', new_string: 'b' } }), /names no file/],
    [
      'a path only in the title',
      (outside) => call({ tool: 'Edit', kind: 'edit', title: `Edit ${outside}`, rawInput: { old_string: 'a', new_string: 'b' } }),
      /its title names .*secret\.txt, which the request itself does not/
    ],
    [
      'a path in a field not on the list',
      (outside) => call({ tool: 'Edit', kind: 'edit', title: 'Edit', locations: [join(project, 'a.md')], rawInput: { target: outside } }),
      /it names .*secret\.txt, outside project's folders/
    ],
    [
      'a path deeper than the reader looks',
      (outside) =>
        call({
          tool: 'Edit',
          kind: 'edit',
          title: 'Edit',
          locations: [join(project, 'a.md')],
          rawInput: { a: { b: { c: { d: { e: { f: { g: { h: { i: { j: { file_path: outside } } } } } } } } } } }
        }),
      /nested deeper than Switchboard looks/
    ],
    [
      'a file:// URI',
      (outside) => call({ tool: 'Edit', kind: 'edit', title: 'Edit', rawInput: { file_path: `file://${outside}` } }),
      /it names file:\/\/.*, outside project's folders/
    ],
    [
      'a hard link inside to a file outside',
      () => edit(join(project, 'linked.md')),
      /linked\.md \(a file with 2 hard links\), outside project's folders/
    ]
  ]

  it.each(cases)('"always" for Edit on files inside does not answer a request with %s', async (_what, text, reason) => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    await promptAsking(id, edit(join(project, 'a.md')), 'allow_always')
    const outside = outsideFile()
    await mkdir(join(root, 'elsewhere'))
    await writeFile(outside, 'secret')
    await link(outside, join(project, 'linked.md'))
    const asked = await promptAsking(id, text(outside), 'reject')
    expect(asked.asked).not.toBeNull()
    expect(asked.asked?.always).toMatchObject({ remembered: false, reason: expect.stringMatching(reason) })
    expect(asked.said).toBe('permission: reject')
    // A file inside, named where the reader looks, is still covered.
    expect((await promptAsking(id, edit(join(project, 'b.md')), null)).asked).toBeNull()
  })

  it('a command rule covers the command with its arguments only, and a request whose announced call shows another command is asked, saying both', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    const terminal = (args: string[], extra: Record<string, unknown> = {}): string =>
      call({ tool: 'Bash', kind: 'execute', title: 'rm', rawInput: { command: 'rm', args }, ...extra })
    const first = await promptAsking(id, terminal(['build/out.txt']), 'allow_always')
    expect(first.asked?.always).toMatchObject({ remembered: true, scope: { kind: 'command', command: 'rm build/out.txt' } })
    // Other arguments: another command.
    const other = await promptAsking(id, terminal(['-rf', 'src']), 'reject')
    expect(other.asked?.always).toMatchObject({ remembered: true, scope: { kind: 'command', command: 'rm -rf src' } })
    // The same arguments: answered by the rule.
    expect((await promptAsking(id, terminal(['build/out.txt']), null)).asked).toBeNull()

    // Announced as the harmless command, asked for another (same toolCallId): asked, the difference said.
    const swapped = await promptAsking(
      id,
      bash('rm -rf ~', { announced: { title: 'rm build/out.txt', rawInput: { command: 'rm', args: ['build/out.txt'] } } }),
      'reject'
    )
    expect(swapped.asked).not.toBeNull()
    expect(swapped.asked?.always).toEqual({
      remembered: false,
      reason: 'the agent announced the command “rm build/out.txt” but asks for “rm -rf ~”, so it is asked each time'
    })
    expect(await host.request('permissions.list', { projectId })).toHaveLength(1)
  })

  it('an MCP rule names the server and the tool (Codex titles them all alike), and its "for this session" stays in this session, in memory', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    const first = await promptAsking(id, codexMcp('docs', 'search_docs', { query: 'x' }), 'approved-always')
    expect(first.said).toBe('permission: approved')
    expect(first.asked?.always).toMatchObject({ remembered: true, tool: 'search_docs', scope: { kind: 'mcp', server: 'docs' } })
    expect(first.asked?.options.map((o) => [o.optionId, o.forSession ?? false])).toEqual([
      ['approved', false],
      ['approved-for-session', true],
      ['approved-always', false],
      ['cancel', false]
    ])
    expect(await host.request('permissions.list', { projectId })).toMatchObject([{ tool: 'search_docs', scope: { kind: 'mcp', server: 'docs' } }])
    // The same tool of the same server: answered by the rule.
    expect((await promptAsking(id, codexMcp('docs', 'search_docs', { query: 'y' }), null)).said).toBe('permission: approved')
    // Another tool of that server, the same tool name on another server: asked.
    expect((await promptAsking(id, codexMcp('docs', 'delete_docs'), 'cancel')).asked).not.toBeNull()
    expect((await promptAsking(id, codexMcp('mail', 'search_docs'), 'cancel')).asked).not.toBeNull()

    // "Allow for this session" on another tool: remembered for this session only, never in db.json.
    const session = await promptAsking(id, codexMcp('mail', 'send'), 'approved-for-session')
    expect(session.said).toBe('permission: approved')
    expect(await lastPermissionEntry(id)).toMatchObject({
      answer: 'Allow for this session',
      rule: expect.stringMatching(/send of the MCP server mail.*, for this session$/)
    })
    expect((await promptAsking(id, codexMcp('mail', 'send'), null)).said).toBe('permission: approved')
    expect(await host.request('permissions.list', { projectId })).toHaveLength(1)
    expect(JSON.stringify(await readDbJson(dataDir))).not.toContain('"send"')
    // Another session of the same agent and project is asked.
    const other = await host.request('sessions.new', { projectId, agentId })
    expect((await promptAsking(other.id, codexMcp('mail', 'send'), 'cancel')).asked).not.toBeNull()
    // After a restart the session is asked again; the lasting rule still answers.
    await host.close()
    host = await openHost(dataDir)
    expect((await promptAsking(id, codexMcp('mail', 'send'), 'cancel')).asked).not.toBeNull()
    expect((await promptAsking(id, codexMcp('docs', 'search_docs'), null)).asked).toBeNull()
  })
})

describe('several permission requests at once', () => {
  it('lists both, oldest first, and answers each on its own', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/permissions 2' })
    const pending = await waitForState(host, session.id, 'two pending requests', (state) => {
      const list = state.permissions ?? []
      return list.length === 2 ? list : null
    })
    expect(pending.map((p) => p.title)).toEqual(['Step 1 of 2', 'Step 2 of 2'])

    // The second first: the first stays listed and waiting.
    await host.request('sessions.respondPermission', { id: session.id, requestId: pending[1].requestId, optionId: 'reject' })
    const after = (await host.request('sessions.open', { id: session.id })).state.permissions ?? []
    expect(after.map((p) => p.requestId)).toEqual([pending[0].requestId])
    await host.request('sessions.respondPermission', { id: session.id, requestId: pending[0].requestId, optionId: 'allow' })

    expect(await turn).toEqual({ stopReason: 'end_turn' })
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('permissions: allow, reject')
    expect(entriesOf(thread, 'permission').map((e) => (e as { title: string; answer: string }).title)).toEqual(['Step 2 of 2', 'Step 1 of 2'])
    expect((await host.request('sessions.open', { id: session.id })).state.permissions).toEqual([])
  })
})

describe('database migrations', () => {
  it('migrates a version 1 db.json, keeping a backup and every record', async () => {
    await host.close()
    const v1 = {
      version: 1,
      projects: [{ id: 'p1', name: 'old', cwd: join(root, 'project'), createdAt: '2026-01-01T00:00:00.000Z' }],
      agents: [{ id: 'a1', name: 'Old agent', command: 'old-agent', args: [], env: {} }],
      sessions: []
    }
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(v1))
    host = await openHost(dataDir)
    const migrated = await readDbJson(dataDir)
    // 6: the agent's command in its transport.
    const agents = [{ id: 'a1', name: 'Old agent', transport: { kind: 'process', command: 'old-agent', args: [], env: {} } }]
    expect(migrated).toEqual({ ...v1, agents, version: DB_VERSION, permissionRules: [], mcpProfiles: [], mcpDisabled: {} })
    expect(JSON.parse(await readFile(join(dataDir, 'db.v1.backup.json'), 'utf8'))).toEqual(v1)
    expect(await host.request('projects.list', {})).toEqual(v1.projects)
  })

  it('drops the rules of a version 4 db.json (each covered a whole kind of tool), says so once, and keeps everything else', async () => {
    await host.close()
    const at = '2026-01-01T00:00:00.000Z'
    const v4 = {
      version: 4,
      projects: [{ id: 'p1', name: 'app', cwd: project, createdAt: at }],
      agents: [{ id: 'claude', name: 'Claude Code', command: 'claude-agent-acp', args: [], env: {} }],
      sessions: [
        {
          id: 's1',
          acpSessionId: 'x',
          agentId: 'claude',
          projectId: 'p1',
          cwd: project,
          title: 'Fix',
          titleSource: 'user',
          createdAt: at,
          updatedAt: at
        }
      ],
      permissionRules: [
        { id: 'r1', agentId: 'claude', projectId: 'p1', toolKind: 'edit', decision: 'allow', createdAt: at },
        { id: 'r2', agentId: 'claude', projectId: 'p1', toolKind: 'execute', decision: 'allow', createdAt: at }
      ],
      mcpProfiles: [{ id: 'm1', name: 'files', version: 1 }],
      mcpDisabled: { p1: ['m1'] },
      settings: { registryUrl: 'https://example.com/registry.json' }
    }
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(v4))
    host = await openHost(dataDir)
    const { warnings } = await host.request('app.info', {})
    expect(warnings).toEqual([
      'Your 2 remembered permissions were removed (always allow every “edit” tool for Claude Code in app; always allow every “execute” tool for Claude Code in app): ' +
        'each covered a whole kind of tool (every command, or every file even outside the project), more than the one you chose. ' +
        'The agent will ask again; "always" now covers only that tool with that exact command, or that tool on files inside the project.'
    ])
    expect(await host.request('permissions.list', {})).toEqual([])
    const migrated = await readDbJson(dataDir)
    const agents = [{ id: 'claude', name: 'Claude Code', transport: { kind: 'process', command: 'claude-agent-acp', args: [], env: {} } }]
    expect(migrated).toEqual({ ...v4, agents, version: DB_VERSION, permissionRules: [] })
    expect(JSON.parse(await readFile(join(dataDir, 'db.v4.backup.json'), 'utf8'))).toEqual(v4)

    // Told once: the next start has nothing to say.
    await host.close()
    host = await openHost(dataDir)
    expect((await host.request('app.info', {})).warnings).toEqual([])
  })

  it('refuses a database from a newer Switchboard without touching it', async () => {
    await host.close()
    const future = JSON.stringify({ version: 99, projects: [], agents: [], sessions: [] })
    await writeFile(join(dataDir, 'db.json'), future)
    await expect(openHost(dataDir)).rejects.toThrow(`written by a newer Switchboard (database version 99, this one reads ${DB_VERSION})`)
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(future)
    expect(existsSync(join(dataDir, 'db.v99.backup.json'))).toBe(false)
    host = await openHost(join(root, 'other-data'))
  })
})

describe('$/cancel_request', () => {
  it('takes a withdrawn permission request off the screen and answers it cancelled', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: session.id, text: '/permission-withdrawn 300' })
    // It was on the screen: a state the window was sent held it. (Read from the events, not by polling: the request
    // stands for 300 ms, which a poll on a loaded machine can miss.)
    host.events.flush()
    const shown = events.filter((e) => e.type === 'session.state' && e.payload.id === session.id && (e.payload.permissions?.length ?? 0) > 0)
    expect(shown.length).toBeGreaterThan(0)
    const snapshot = await host.request('sessions.open', { id: session.id })
    expect(snapshot.state.permissions?.[0]).toBeFalsy()
    const thread = fold(snapshot.records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('withdrawn: cancelled')
    expect(entriesOf(thread, 'permission')).toMatchObject([{ answer: 'Dismissed', allowed: false }])
  })
})
