import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UserEnvironment } from '../../electron/host/environment'
import { findExecutable } from '../../electron/host/executables'
import { defaultAgentPresets } from '../../electron/host/presets'
import { removeDir, tempDir } from '../helpers'

let dir: string
beforeEach(async () => {
  dir = await tempDir('presets')
  await mkdir(join(dir, 'bin'))
})
afterEach(() => removeDir(dir))

async function fakeCommand(name: string): Promise<void> {
  await writeFile(join(dir, 'bin', name), '#!/bin/sh\n')
  await chmod(join(dir, 'bin', name), 0o755)
}

describe.skipIf(process.platform === 'win32')('agent presets', () => {
  it('run an installed agent directly, and the others through npx', async () => {
    await fakeCommand('claude-agent-acp')
    await fakeCommand('gemini')
    const presets = await defaultAgentPresets(UserEnvironment.of({ PATH: join(dir, 'bin') }))
    expect(presets.map((p) => [p.id, p.command, p.args])).toEqual([
      ['claude-code', 'claude-agent-acp', []],
      ['gemini', 'gemini', ['--acp']],
      ['codex', 'npx', ['-y', '@zed-industries/codex-acp']]
    ])
    expect(presets[1].env).toEqual({ GEMINI_CLI_NO_RELAUNCH: 'true' })
    expect(presets.every((p) => p.installHint?.startsWith('npm install -g '))).toBe(true)
  })

  it('finds commands on PATH or by path, and only executable files', async () => {
    await fakeCommand('agent-x')
    await writeFile(join(dir, 'bin', 'not-executable'), 'data')
    expect(await findExecutable('agent-x', { PATH: join(dir, 'bin') })).toBe(join(dir, 'bin', 'agent-x'))
    expect(await findExecutable(join(dir, 'bin', 'agent-x'), { PATH: '' })).toBe(join(dir, 'bin', 'agent-x'))
    expect(await findExecutable('not-executable', { PATH: join(dir, 'bin') })).toBeNull()
    expect(await findExecutable('bin', { PATH: dir })).toBeNull()
    expect(await findExecutable('agent-x', { PATH: '' })).toBeNull()
  })
})
