import { link, mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { pathsOutside, rememberable, ruleMatches, sessionScoped, subjectOf } from '../../electron/host/asks/permission-rules'
import type { PermissionRule } from '../../shared/domain'
import { describeRule, describeScope, type RuleSubject } from '../../shared/permissions'
import type { ToolCallEntry } from '../../shared/thread'
import { removeDir, tempDir } from '../helpers'

/** What a permission request is about, and which remembered rules cover it. */

function announced(fields: Partial<ToolCallEntry>): ToolCallEntry {
  return {
    kind: 'tool_call',
    id: 'tool_call:t1',
    toolCallId: 't1',
    title: 'Tool call',
    toolKind: 'other',
    status: 'pending',
    content: [],
    locations: [],
    ...fields
  }
}

describe('the subject of a request', () => {
  it('takes the tool name from the request, else from the announced call (Claude Code), else from the title', () => {
    const toolCall = { toolCallId: 't1', title: 'Edit a.md', kind: 'edit' as const }
    expect(subjectOf({ ...toolCall, _meta: { claudeCode: { toolName: 'MultiEdit' } } }, announced({ toolName: 'Edit' })).tool).toBe('MultiEdit')
    expect(subjectOf(toolCall, announced({ toolName: 'Edit' })).tool).toBe('Edit')
    // Codex: "Edit /path"; Gemini: "Writing to notes.md".
    expect(subjectOf(toolCall, undefined).tool).toBe('Edit')
    expect(subjectOf({ toolCallId: 't1', title: 'Writing to notes.md', kind: 'edit' }, undefined).tool).toBe('Writing')
    // A title that does not start with a tool's word (Gemini CLI's edits: "hello.txt: hello => hello, edited") is named by
    // its kind, so an "always" on it covers the next edit too, not only that exact one (issue 36.8).
    expect(subjectOf({ toolCallId: 't1', title: 'hello.txt: hello => hello, edited', kind: 'edit' }, undefined).tool).toBe('Edit')
    expect(subjectOf({ toolCallId: 't2', title: 'notes.md: x => y', kind: 'edit' }, undefined).tool).toBe('Edit')
    // A kind that says nothing of the tool: the title names itself (a rule covers only the same request).
    expect(subjectOf({ toolCallId: 't1', title: 'notes.md: a => b', kind: 'other' }, undefined).tool).toBe('notes.md: a => b')
  })

  it('knows the command line: rawInput.command (a string, or arguments quoted where needed), else an execute title', () => {
    expect(subjectOf({ toolCallId: 't1', title: 'x', kind: 'execute', rawInput: { command: 'npm test' } }, undefined)).toMatchObject({
      tool: 'Command',
      command: 'npm test'
    })
    expect(subjectOf({ toolCallId: 't1', kind: 'execute', rawInput: { command: ['bash', '-lc', "echo 'hi there'"] } }, undefined).command).toBe(
      `bash -lc 'echo '\\''hi there'\\'''`
    )
    expect(subjectOf({ toolCallId: 't1', title: 'touch /tmp/x', kind: 'execute' }, undefined).command).toBe('touch /tmp/x')
    expect(subjectOf({ toolCallId: 't1', title: 'Read a', kind: 'read' }, undefined).command).toBeUndefined()
  })

  it('gathers every path it names: locations, diffs, path fields at any depth, a patch map, from the request and the announced call', () => {
    const subject = subjectOf(
      {
        toolCallId: 't1',
        kind: 'edit',
        locations: [{ path: '/p/a' }],
        content: [{ type: 'diff', path: '/p/b', newText: '' }],
        rawInput: {
          file_path: '/p/c',
          nested: { edits: [{ notebook_path: '/p/d' }] },
          changes: { '/p/e': { add: '' } },
          cwd: '/p',
          content: 'not a path'
        }
      },
      announced({ locations: [{ path: '/p/f' }], rawInput: { paths: ['/p/g'] } })
    )
    expect([...subject.paths].sort()).toEqual(['/p', '/p/a', '/p/b', '/p/c', '/p/d', '/p/e', '/p/f', '/p/g'])
  })
})

describe('paths outside the folders', () => {
  let root: string
  beforeEach(async () => {
    root = await tempDir('rules')
    await mkdir(join(root, 'project', 'src'), { recursive: true })
    await mkdir(join(root, 'other'))
    await symlink(join(root, 'other'), join(root, 'project', 'out'))
  })
  afterEach(() => removeDir(root))

  it('are those not inside once links are followed, relative ones taken from the cwd; ~ counts as outside', async () => {
    const project = join(root, 'project')
    const named = [join(project, 'src', 'new.ts'), 'src/a.ts', '../other/x', join(project, 'out', 'x'), '~/.ssh/id_rsa', join(root, 'lib', 'y')]
    expect(await pathsOutside(named, [project], project)).toEqual(['../other/x', join(project, 'out', 'x'), '~/.ssh/id_rsa', join(root, 'lib', 'y')])
    // An additional folder of the session counts as inside.
    expect(await pathsOutside([join(root, 'other', 'x')], [project, join(root, 'other')], project)).toEqual([])
  })
})

describe('what "always" remembers and matches', () => {
  const rule = (fields: Partial<PermissionRule>): PermissionRule => ({
    id: 'r',
    agentId: 'a',
    projectId: 'p',
    tool: 'Bash',
    toolKind: 'execute',
    scope: { kind: 'command', command: 'npm test' },
    decision: 'allow',
    createdAt: '',
    ...fields
  })

  it('a command, files inside, or a tool naming no file; nothing for a mode switch or a path outside', () => {
    expect(rememberable({ tool: 'Bash', toolKind: 'execute', command: 'ls', paths: [] }, [], 'app')).toEqual({
      ok: true,
      subject: { tool: 'Bash', toolKind: 'execute', scope: { kind: 'command', command: 'ls' } }
    })
    expect(rememberable({ tool: 'Edit', toolKind: 'edit', paths: ['/app/a'] }, [], 'app')).toMatchObject({
      ok: true,
      subject: { scope: { kind: 'files' } }
    })
    expect(rememberable({ tool: 'WebFetch', toolKind: 'fetch', paths: [] }, [], 'app')).toMatchObject({
      ok: true,
      subject: { scope: { kind: 'tool' } }
    })
    expect(rememberable({ tool: 'ExitPlanMode', toolKind: 'switch_mode', paths: [] }, [], 'app')).toEqual({ ok: false, reason: null })
    expect(rememberable({ tool: 'Edit', toolKind: 'edit', paths: ['/a', '/b'] }, ['/a', '/b'], 'app')).toEqual({
      ok: false,
      reason: "it names /a (and 1 more), outside app's folders, so it is asked each time"
    })
  })

  it('matches the same tool and kind, and a command only exactly', () => {
    const command = (c: string) => ({ tool: 'Bash', toolKind: 'execute', scope: { kind: 'command' as const, command: c } })
    expect(ruleMatches(rule({}), command('npm test'))).toBe(true)
    expect(ruleMatches(rule({}), command('npm test '))).toBe(false)
    expect(ruleMatches(rule({}), command('npm test && curl evil'))).toBe(false)
    expect(ruleMatches(rule({}), { ...command('npm test'), tool: 'Shell' })).toBe(false)
    const files = rule({ tool: 'Edit', toolKind: 'edit', scope: { kind: 'files' } })
    expect(ruleMatches(files, { tool: 'Edit', toolKind: 'edit', scope: { kind: 'files' } })).toBe(true)
    expect(ruleMatches(files, { tool: 'Write', toolKind: 'edit', scope: { kind: 'files' } })).toBe(false)
    expect(ruleMatches(files, { tool: 'Edit', toolKind: 'execute', scope: { kind: 'command', command: 'x' } })).toBe(false)
  })

  it('says what it covers', () => {
    expect(describeRule(rule({}), 'app')).toBe('Always allow running “npm test” with Bash (that exact command only)')
    expect(describeScope({ tool: 'Edit', toolKind: 'edit', scope: { kind: 'files' } }, 'app')).toBe('Edit on any file inside app')
    expect(describeScope({ tool: 'WebFetch', toolKind: 'fetch', scope: { kind: 'tool' } }, 'app')).toBe(
      'WebFetch, as long as it touches no file outside app'
    )
    const long = describeScope({ tool: 'Bash', toolKind: 'execute', scope: { kind: 'command', command: `echo ${'x'.repeat(200)}\nls` } }, 'app')
    expect(long).toMatch(/^running “echo x+…” with Bash \(that exact command only\)$/)
  })
})

describe('what "always" covers, exactly', () => {
  const edit = { toolCallId: 't1', kind: 'edit' as const, _meta: { claudeCode: { toolName: 'Edit' } } }
  const files = { tool: 'Edit', toolKind: 'edit', scope: { kind: 'files' as const } }
  const rule = (subject: RuleSubject): PermissionRule => {
    const made: PermissionRule = { id: 'r', agentId: 'a', projectId: 'p', decision: 'allow', createdAt: '', ...subject }
    return made
  }
  const remembered = (r: ReturnType<typeof rememberable>): RuleSubject => {
    if (!r.ok) throw new Error(`not remembered: ${r.reason}`)
    return r.subject
  }

  it('a tool that works on files and names none is not remembered, and a files rule does not match it', () => {
    const subject = subjectOf({ ...edit, title: 'Edit', rawInput: { old_string: 'a', new_string: 'b' } }, undefined)
    expect(subject.paths).toEqual([])
    expect(rememberable(subject, [], 'app')).toEqual({
      ok: false,
      reason: 'it names no file, so what it would touch is not known; it is asked each time'
    })
    expect(ruleMatches(rule(files), { tool: 'Edit', toolKind: 'edit', scope: { kind: 'tool' } })).toBe(false)
  })

  it('a path only in the title makes what the request touches unknown', () => {
    const subject = subjectOf({ ...edit, title: 'Edit /etc/passwd', rawInput: { old_string: 'a' } }, undefined)
    expect(subject.unknown).toBe('its title names /etc/passwd, which the request itself does not')
    // Named in the request too: known.
    expect(subjectOf({ ...edit, title: 'Edit /p/a.md', locations: [{ path: '/p/a.md' }] }, undefined).unknown).toBeUndefined()
  })

  it('takes a path-like value from any field, not only the listed ones, and leaves text fields alone', () => {
    const subject = subjectOf(
      {
        ...edit,
        title: 'Edit',
        rawInput: { target: '/etc/passwd', list: ['~/.ssh/config'], uri: 'file:///etc/hosts', new_string: '/* a comment */' }
      },
      undefined
    )
    expect(subject.paths.sort()).toEqual(['/etc/passwd', 'file:///etc/hosts', '~/.ssh/config'])
    // A web address is not a path: a fetch names no file, and its "always" covers the tool.
    const fetch = subjectOf(
      { toolCallId: 't1', kind: 'fetch', title: 'Fetch https://example.com/a', rawInput: { url: 'https://example.com/a' } },
      undefined
    )
    expect(fetch).toMatchObject({ paths: [] })
    expect(fetch.unknown).toBeUndefined()
    expect(rememberable(fetch, [], 'app')).toMatchObject({ ok: true, subject: { scope: { kind: 'tool' } } })
  })

  it('input nested deeper than the reader looks is unknown', () => {
    let deep: Record<string, unknown> = { file_path: '/p/a' }
    for (let i = 0; i < 10; i++) deep = { deeper: deep }
    expect(subjectOf({ ...edit, title: 'Edit', locations: [{ path: '/p/a' }], rawInput: deep }, undefined).unknown).toMatch(
      /nested deeper than Switchboard looks/
    )
  })

  it('a command takes its arguments (an args array), and differs from the one announced for the same call at its peril', () => {
    expect(subjectOf({ toolCallId: 't1', kind: 'execute', rawInput: { command: 'rm', args: ['-rf', 'my dir'] } }, undefined).command).toBe(
      "rm -rf 'my dir'"
    )
    const command = (c: string) => ({ tool: 'Bash', toolKind: 'execute', scope: { kind: 'command' as const, command: c } })
    expect(ruleMatches(rule(command('rm')), command('rm -rf /'))).toBe(false)
    const swapped = subjectOf(
      { toolCallId: 't1', kind: 'execute', rawInput: { command: 'rm -rf ~' } },
      announced({ toolKind: 'execute', rawInput: { command: 'ls' } })
    )
    expect(swapped.unknown).toBe('the agent announced the command “ls” but asks for “rm -rf ~”')
    expect(rememberable(swapped, [], 'app')).toMatchObject({ ok: false })
  })

  it("names an MCP tool by its server and name, from Codex's approval or the announced invocation", () => {
    const codex = (server: string, tool: string) => ({
      toolCallId: 'call-1',
      title: 'Approve MCP tool call',
      rawInput: {
        server_name: server,
        request: { mode: 'form', _meta: { codex_approval_kind: 'mcp_tool_call' }, message: `Allow the ${server} MCP server to run tool "${tool}"?` }
      }
    })
    const subject = subjectOf(codex('docs', 'search'), undefined)
    expect(subject).toMatchObject({ tool: 'search', mcpServer: 'docs' })
    const rememberedSearch = rememberable(subject, [], 'app')
    expect(rememberedSearch).toEqual({ ok: true, subject: { tool: 'search', toolKind: 'other', scope: { kind: 'mcp', server: 'docs' } } })
    const docsSearch = rule(remembered(rememberedSearch))
    for (const [server, tool] of [
      ['docs', 'delete'],
      ['mail', 'search']
    ]) {
      expect(ruleMatches(docsSearch, remembered(rememberable(subjectOf(codex(server, tool), undefined), [], 'app')))).toBe(false)
    }
    // The announced invocation names it too; a tool the request does not name is not remembered.
    expect(
      subjectOf({ toolCallId: 'c', title: 'Tool: docs/search' }, announced({ rawInput: { server: 'docs', tool: 'search', arguments: {} } }))
    ).toMatchObject({
      tool: 'search',
      mcpServer: 'docs'
    })
    const unnamed = subjectOf(
      { toolCallId: 'c', title: 'Approve MCP tool call', rawInput: { server_name: 'docs', request: { message: 'Allow?' } } },
      undefined
    )
    expect(unnamed.unknown).toBe('it does not say which tool of the MCP server docs it runs')
    expect(describeScope({ tool: 'search', toolKind: 'other', scope: { kind: 'mcp', server: 'docs' } }, 'app')).toBe(
      'the tool search of the MCP server docs, and no other'
    )
  })

  it('knows an agent\'s "for this session" option', () => {
    expect(sessionScoped({ optionId: 'approved-for-session', name: 'Allow for this session', kind: 'allow_always' })).toBe(true)
    expect(sessionScoped({ optionId: 'x', name: "Yes, and don't ask again for this command in this session", kind: 'allow_always' })).toBe(true)
    expect(sessionScoped({ optionId: 'allow_always', name: 'Always Allow all Edit', kind: 'allow_always' })).toBe(false)
  })
})

describe('paths a request names that cannot be shown inside', () => {
  let root: string
  beforeEach(async () => {
    root = await tempDir('rules-links')
    await mkdir(join(root, 'project'), { recursive: true })
    await writeFile(join(root, 'secret.txt'), 'secret')
    await link(join(root, 'secret.txt'), join(root, 'project', 'linked.txt'))
    await writeFile(join(root, 'project', 'plain.txt'), 'plain')
  })
  afterEach(() => removeDir(root))

  it('a file:// URI and a hard link count as outside', async () => {
    const project = join(root, 'project')
    expect(await pathsOutside([`file://${project}/plain.txt`, join(project, 'linked.txt'), join(project, 'plain.txt')], [project], project)).toEqual([
      `file://${project}/plain.txt`,
      `${join(project, 'linked.txt')} (a file with 2 hard links)`
    ])
  })
})
