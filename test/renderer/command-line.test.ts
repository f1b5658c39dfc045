import { describe, expect, it } from 'vitest'
import { splitCommandLine } from '../../renderer/src/components/agents/command-line'

/** A command line pasted into the custom agent form, split as a shell would, without a shell. */

describe('splitCommandLine', () => {
  it('splits an npx line with quoted arguments', () => {
    expect(splitCommandLine('npx -y @foo/bar@1.2 --acp --flag "a b"')).toEqual({
      command: 'npx',
      args: ['-y', '@foo/bar@1.2', '--acp', '--flag', 'a b'],
      env: {}
    })
  })

  it('takes the variables set in front as the environment', () => {
    expect(splitCommandLine('FOO=1 BAR="two words" cmd --x')).toEqual({ command: 'cmd', args: ['--x'], env: { FOO: '1', BAR: 'two words' } })
    // Only in front: an argument that looks like one is an argument.
    expect(splitCommandLine('cmd FOO=1')).toEqual({ command: 'cmd', args: ['FOO=1'], env: {} })
  })

  it('keeps quotes, escapes and empty arguments as a shell does', () => {
    expect(splitCommandLine(`agent --name='it''s' --path /a\\ b/c "" --json '{"a": 1}'`)).toEqual({
      command: 'agent',
      args: ['--name=its', '--path', '/a b/c', '', '--json', '{"a": 1}'],
      env: {}
    })
    expect(splitCommandLine(`'/opt/My Agent/bin/agent' --acp`).command).toBe('/opt/My Agent/bin/agent')
  })

  it('expands nothing: variables and globs reach the program as written', () => {
    expect(splitCommandLine('agent --home $HOME --files *.ts "${X}"')).toEqual({
      command: 'agent',
      args: ['--home', '$HOME', '--files', '*.ts', '$X'],
      env: {}
    })
  })

  it('stops at a comment', () => {
    expect(splitCommandLine('agent --acp # the README says so')).toEqual({ command: 'agent', args: ['--acp'], env: {} })
  })

  it('refuses what needs a shell, and a line with no program, saying why', () => {
    expect(() => splitCommandLine('agent --acp | tee log')).toThrow(/'\|' needs a shell/)
    expect(() => splitCommandLine('cd x && agent')).toThrow(/'&&' needs a shell/)
    expect(() => splitCommandLine('agent > out.txt')).toThrow(/'>' needs a shell/)
    expect(() => splitCommandLine('FOO=1')).toThrow(/names no program/)
    expect(() => splitCommandLine('   ')).toThrow(/empty/)
  })
})
