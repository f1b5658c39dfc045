import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConsoleCodes, CODE_TTL_MS, MAX_WRONG_CODES } from '../../electron/host/web/console-codes'
import type { ConfirmAnswer, ConfirmCommand } from '../../electron/host/contract/confirmations'
import { Host } from '../../electron/host/host'
import { MemorySecretStore } from '../../electron/host/storage/secrets'
import { changeLines, commandLineOf, quoteArg, visible, type CommandChange } from '../../shared/confirmation'
import { removeDir, tempDir } from '../helpers'

/**
 * A change that would run a program is confirmed outside the page: what the
 * confirmation shows (exact, nothing hidden), serve's console codes, and which
 * requests ask at all (what runs changes) and what a refusal leaves (nothing).
 */

describe('what a confirmation shows', () => {
  it('writes each argument as a shell reads it back, exactly', () => {
    expect(quoteArg('--acp')).toBe('--acp')
    expect(quoteArg('/usr/bin/node')).toBe('/usr/bin/node')
    expect(quoteArg('')).toBe("''")
    expect(quoteArg('two words')).toBe("'two words'")
    expect(quoteArg("it's")).toBe(`'it'\\''s'`)
    expect(quoteArg('$(rm -rf ~)')).toBe("'$(rm -rf ~)'")
    expect(quoteArg('a;b')).toBe("'a;b'")
    expect(commandLineOf('npx', ['-y', '@scope/agent@1.2.3', '--flag=x y'])).toBe("npx -y @scope/agent@1.2.3 '--flag=x y'")
  })

  it('writes out characters that hide or reorder text (bidi overrides, zero-width, line breaks, controls)', () => {
    // U+202E turns the rest of a line around on screen: "safe-tool ‮hs.lave" would read as "safe-tool evals.sh".
    expect(quoteArg('safe\u202Eevil')).toBe("$'safe\\u202Eevil'")
    expect(quoteArg('a\u200Bb')).toBe("$'a\\u200Bb'")
    expect(quoteArg('line\nnext')).toBe("$'line\\nnext'")
    expect(quoteArg('bell\u0007')).toBe("$'bell\\x07'")
    // A terminal escape would rewrite serve's console: written out instead.
    expect(quoteArg('\u001b[2Jok')).toBe("$'\\x1B[2Jok'")
    expect(visible('Agent\u001b]0;x\u0007')).toBe('Agent\\u{1B}]0;x\\u{7}')
    expect(quoteArg("q'\u2066")).toBe("$'q\\'\\u2066'")
    expect(visible('Name\u202E\u2028x')).toBe('Name\\u{202E}\\u{2028}x')
  })

  it('lists the action, the command line, its folder and variables, secrets by name only', () => {
    const change: CommandChange = {
      action: 'Add the agent “Mine\u202E”',
      confirm: 'Add agent',
      programs: [
        {
          label: 'Agent “Mine”',
          commandLine: commandLineOf('/opt/mine', ['--acp', 'a b']),
          cwd: '/home/me/code',
          env: [
            { name: 'MODE', value: 'fast lane' },
            { name: 'API_KEY', value: '', secret: 'new' },
            { name: 'OLD_KEY', value: '', secret: 'kept' }
          ]
        }
      ]
    }
    expect(changeLines(change)).toEqual([
      'Add the agent “Mine\\u{202E}”',
      '',
      'Agent “Mine” will run:',
      "  /opt/mine --acp 'a b'",
      '  in /home/me/code',
      '  with',
      "    MODE='fast lane'",
      '    API_KEY=(secret, new value)',
      '    OLD_KEY=(secret, unchanged)'
    ])
  })
})

describe("serve's console codes", () => {
  const change = (command: string): CommandChange => ({
    action: `Add the agent “${command}”`,
    confirm: 'Add agent',
    programs: [{ label: `Agent “${command}”`, commandLine: command, env: [] }]
  })
  let lines: string[]
  let now: number
  let codes: ConsoleCodes
  const printedCode = (): string => {
    const line = [...lines].reverse().find((l) => l.includes('type this code'))
    const code = /: ([A-Z0-9]{3}-[A-Z0-9]{3})/.exec(line ?? '')?.[1]
    if (!code) throw new Error(`no code printed in:\n${lines.join('\n')}`)
    return code
  }

  /** A code that is not this one. */
  const wrongFor = (code: string): string => (code === 'AAA-AAA' ? 'BBBBBB' : 'AAAAAA')

  beforeEach(() => {
    lines = []
    now = 1_000_000
    codes = new ConsoleCodes({ print: (line) => lines.push(line), now: () => now })
  })

  it('asks for a code printed on the console with what would run, and takes it once', async () => {
    expect(await codes.confirm(change('good'), undefined)).toMatchObject({ confirmed: false, code: 'confirmation_required' })
    expect(lines.join('\n')).toContain('Agent “good” will run:\n    good')
    const code = printedCode()
    expect(await codes.confirm(change('good'), wrongFor(code))).toMatchObject({
      confirmed: false,
      code: 'confirmation_refused',
      message: expect.stringMatching(/^Wrong code/)
    })
    // Typed in lower case, without the hyphen, with spaces: the same code.
    expect(await codes.confirm(change('good'), ` ${code.replace('-', '').toLowerCase()} `)).toEqual({ confirmed: true })
    // Once only.
    expect(await codes.confirm(change('good'), code)).toMatchObject({ confirmed: false, code: 'confirmation_refused' })
  })

  it('a code confirms only the change it was printed for', async () => {
    await codes.confirm(change('good'), undefined)
    const code = printedCode()
    const other: ConfirmAnswer = await codes.confirm(change('evil'), code)
    expect(other).toMatchObject({ confirmed: false, code: 'confirmation_refused', message: expect.stringContaining('No code is waiting') })
    expect(await codes.confirm(change('good'), code)).toEqual({ confirmed: true })
  })

  it('a code expires after five minutes', async () => {
    await codes.confirm(change('good'), undefined)
    const code = printedCode()
    now += CODE_TTL_MS
    expect(await codes.confirm(change('good'), code)).toMatchObject({ confirmed: false, code: 'confirmation_refused' })
  })

  it(`${MAX_WRONG_CODES} wrong codes drop it; asking again prints a new one that works`, async () => {
    await codes.confirm(change('good'), undefined)
    const code = printedCode()
    const wrong = wrongFor(code)
    for (let i = 1; i < MAX_WRONG_CODES; i++) expect((await codes.confirm(change('good'), wrong)).confirmed).toBe(false)
    expect(await codes.confirm(change('good'), wrong)).toMatchObject({ message: expect.stringContaining(`${MAX_WRONG_CODES} times`) })
    expect(await codes.confirm(change('good'), code)).toMatchObject({ confirmed: false, code: 'confirmation_refused' })
    await codes.confirm(change('good'), undefined)
    expect(await codes.confirm(change('good'), printedCode())).toEqual({ confirmed: true })
  })
})

describe('which requests ask, and what a refusal leaves', () => {
  let root: string
  let host: Host
  let asked: CommandChange[]
  let answer: boolean
  const secrets = new MemorySecretStore()
  const recording: ConfirmCommand = async (change) => {
    asked.push(change)
    return answer ? { confirmed: true } : { confirmed: false, code: 'confirmation_refused', message: 'Cancelled.' }
  }

  beforeEach(async () => {
    root = await tempDir('confirm')
    await mkdir(join(root, 'home'))
    asked = []
    answer = true
    host = await Host.open({ dataDir: join(root, 'data'), version: 'test', presets: [], secrets, confirmCommand: recording })
  })

  afterEach(async () => {
    await host.close()
    await removeDir(root)
  })

  it('a Host opened without a way to confirm refuses, and saves nothing', async () => {
    const bare = await Host.open({ dataDir: join(root, 'bare'), version: 'test', presets: [] })
    try {
      const response = await bare.handle('agents.add', { name: 'X', transport: { kind: 'process', command: 'x' }, confirmationCode: 'ABCDEF' })
      expect(response).toMatchObject({ ok: false, error: { code: 'confirmation_refused', message: expect.stringContaining('no way to ask you') } })
      expect(await bare.request('agents.list', {})).toEqual([])
    } finally {
      await bare.close()
    }
  })

  it('agents: adding asks with the exact command line; a refusal saves nothing, secrets included', async () => {
    answer = false
    const refused = await host.handle('agents.add', {
      name: 'Mine',
      transport: {
        kind: 'process',
        command: '/opt/mine',
        args: ['--acp', 'two words'],
        env: { MODE: 'x' },
        secretEnv: { TOKEN: 's3cret' },
        cwd: join(root, 'home')
      }
    })
    expect(refused).toEqual({ ok: false, error: { message: 'Cancelled.', code: 'confirmation_refused' } })
    expect(asked).toEqual([
      {
        action: 'Add the agent “Mine”',
        confirm: 'Add agent',
        programs: [
          {
            label: 'Agent “Mine”',
            commandLine: "/opt/mine --acp 'two words'",
            cwd: join(root, 'home'),
            env: [
              { name: 'MODE', value: 'x' },
              { name: 'TOKEN', value: '', secret: 'new' }
            ]
          }
        ]
      }
    ])
    expect(JSON.stringify(asked)).not.toContain('s3cret')
    expect(await host.request('agents.list', {})).toEqual([])
    expect(await secrets.get('agent:mine:env:TOKEN')).toBeUndefined()
    // A form that does not check out is refused before anything is asked.
    asked = []
    expect(await host.handle('agents.add', { name: 'Empty', transport: { kind: 'process', command: ' ' } })).toMatchObject({ ok: false })
    expect(asked).toEqual([])
  })

  it('agents: changing the command, arguments, folder or variables asks; a new name, protocol or kept secret does not', async () => {
    const base = { command: 'mine', args: ['--acp'], env: { MODE: 'x' }, secretEnv: { TOKEN: 'one' } }
    const agent = await host.request('agents.add', { name: 'Mine', transport: { kind: 'process', ...base } })
    const update = ({ name = 'Mine', protocol, ...change }: Record<string, unknown>) =>
      host.handle('agents.update', {
        agentId: agent.id,
        name,
        ...(protocol === undefined ? {} : { protocol }),
        transport: { kind: 'process', ...base, secretEnv: { TOKEN: null }, ...change }
      })
    const asks = async (change: Record<string, unknown>): Promise<boolean> => {
      asked = []
      expect(await update(change)).toMatchObject({ ok: true })
      return asked.length > 0
    }
    expect(await asks({ name: 'Renamed' })).toBe(false)
    expect(await asks({ name: 'Renamed', protocol: 2 })).toBe(false)
    expect(await asks({ name: 'Renamed', env: { MODE: 'x' }, secretEnv: { TOKEN: null } })).toBe(false)
    expect(await asks({ command: 'other' })).toBe(true)
    expect(asked[0]).toMatchObject({ action: 'Change what the agent “Renamed” runs', programs: [{ commandLine: 'other --acp' }] })
    expect(await asks({ command: 'other', args: ['--acp', '--yolo'] })).toBe(true)
    expect(await asks({ command: 'other', args: ['--acp', '--yolo'], env: { MODE: 'y' } })).toBe(true)
    expect(await asks({ command: 'other', args: ['--acp', '--yolo'], env: { MODE: 'y', NODE_OPTIONS: '--require /tmp/x.js' } })).toBe(true)
    expect(asked[0].programs[0].env).toContainEqual({ name: 'NODE_OPTIONS', value: '--require /tmp/x.js' })
    const now = { command: 'other', args: ['--acp', '--yolo'], env: { MODE: 'y', NODE_OPTIONS: '--require /tmp/x.js' } }
    // A secret's new value counts: it is part of what the agent runs with (shown as new, never in clear).
    expect(await asks({ ...now, secretEnv: { TOKEN: 'two' } })).toBe(true)
    expect(asked[0].programs[0].env).toContainEqual({ name: 'TOKEN', value: '', secret: 'new' })
    expect(await asks({ ...now, secretEnv: {} })).toBe(true)
    expect(await asks({ ...now, secretEnv: {}, cwd: join(root, 'home') })).toBe(true)
    expect(await asks({ ...now, secretEnv: {}, cwd: join(root, 'home') })).toBe(false)

    // Refused: the definition and its secret stay as they were.
    answer = false
    const before = await host.request('agents.list', {})
    expect(await update({ ...now, command: 'evil', secretEnv: { TOKEN: 'three' } })).toMatchObject({
      ok: false,
      error: { code: 'confirmation_refused' }
    })
    expect(await host.request('agents.list', {})).toEqual(before)
  })

  it('MCP: a new stdio server, or one whose command, arguments, folder or variables change, asks; http servers and renames do not', async () => {
    const asks = async (params: Record<string, unknown>): Promise<{ asked: boolean; id: string }> => {
      asked = []
      const response = await host.handle('mcp.save', params)
      if (!response.ok) throw new Error(response.error.message)
      return { asked: asked.length > 0, id: (response.result as { id: string }).id }
    }
    expect((await asks({ name: 'remote', transport: 'http', url: 'https://example.com/mcp' })).asked).toBe(false)
    const first = await asks({ name: 'files', transport: 'stdio', command: 'npx', args: ['-y', 'server-files', '/tmp'] })
    expect(first.asked).toBe(true)
    expect(asked[0]).toEqual({
      action: 'Add the MCP server “files”',
      confirm: 'Add server',
      programs: [{ label: 'MCP server “files”', commandLine: 'npx -y server-files /tmp', env: [] }]
    })
    const stdio = { id: first.id, name: 'files', transport: 'stdio', command: 'npx', args: ['-y', 'server-files', '/tmp'] }
    expect((await asks({ ...stdio, name: 'renamed' })).asked).toBe(false)
    expect((await asks({ ...stdio, name: 'renamed', enabled: false })).asked).toBe(false)
    expect((await asks({ ...stdio, args: ['-y', 'server-files', '/'] })).asked).toBe(true)
    expect((await asks({ ...stdio, args: ['-y', 'server-files', '/'], env: [{ name: 'K', value: 'v', secret: true }] })).asked).toBe(true)
    expect(asked[0].programs[0].env).toEqual([{ name: 'K', value: '', secret: 'new' }])
    // The secret kept as it is (sent without a value): nothing that runs changes.
    expect((await asks({ ...stdio, args: ['-y', 'server-files', '/'], env: [{ name: 'K', secret: true }] })).asked).toBe(false)

    answer = false
    const before = await host.request('mcp.list', {})
    const refused = await host.handle('mcp.save', { ...stdio, command: 'evil' })
    expect(refused).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    const fresh = await host.handle('mcp.save', {
      name: 'new one',
      transport: 'stdio',
      command: 'evil',
      env: [{ name: 'S', value: 'x', secret: true }]
    })
    expect(fresh).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    expect(await host.request('mcp.list', {})).toEqual(before)
  })

  it('a change too long to show is refused without asking', async () => {
    const response = await host.handle('agents.add', {
      name: 'Long',
      transport: { kind: 'process', command: 'x', args: Array.from({ length: 10 }, () => 'y'.repeat(4000)) }
    })
    expect(response).toMatchObject({ ok: false, error: { code: 'confirmation_refused', message: expect.stringContaining('too long to show') } })
    expect(asked).toEqual([])
    expect(await host.request('agents.list', {})).toEqual([])
  })
})
