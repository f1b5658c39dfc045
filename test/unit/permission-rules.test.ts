import { mkdir, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { pathsOutside, rememberable, ruleMatches, subjectOf } from '../../electron/host/asks/permission-rules'
import type { PermissionRule } from '../../shared/domain'
import { describeRule, describeScope } from '../../shared/permissions'
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
    // A title that does not start with a word names itself.
    expect(subjectOf({ toolCallId: 't1', title: 'notes.md: a => b', kind: 'edit' }, undefined).tool).toBe('notes.md: a => b')
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
    expect(describeRule(rule({}), 'app')).toBe('Always allow Bash, only the command “npm test”')
    expect(describeScope({ tool: 'Edit', toolKind: 'edit', scope: { kind: 'files' } }, 'app')).toBe('Edit on any file inside app')
    expect(describeScope({ tool: 'WebFetch', toolKind: 'fetch', scope: { kind: 'tool' } }, 'app')).toBe('WebFetch, when it names no file outside app')
    const long = describeScope({ tool: 'Bash', toolKind: 'execute', scope: { kind: 'command', command: `echo ${'x'.repeat(200)}\nls` } }, 'app')
    expect(long).toMatch(/^Bash, only the command “echo x+…”$/)
  })
})
