import { readFileSync } from 'node:fs'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UserEnvironment } from '../../electron/host/child-processes/environment'
import { findExecutable } from '../../electron/host/child-processes/executables'
import { defaultAgentPresets, PRESET_PACKAGES, presetRunOf, withPresetVersion } from '../../electron/host/agents/presets'
import { removeDir, runOf, tempDir } from '../helpers'

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
    expect(presets.map((p) => [p.id, runOf(p).command, runOf(p).args])).toEqual([
      ['claude-code', 'claude-agent-acp', []],
      ['gemini', 'gemini', ['--acp']],
      ['codex', 'npx', ['-y', `@agentclientprotocol/codex-acp@${PRESET_PACKAGES[2]!.version}`]]
    ])
    expect(runOf(presets[1]).env).toEqual({ GEMINI_CLI_NO_RELAUNCH: 'true' })
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

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>

describe('what users run is what is tested', () => {
  it.each(PRESET_PACKAGES.map((p) => [p.presetId, p] as const))(
    "the %s preset pins, through npx, the version package.json's devDependencies install for the real-agent suites",
    (_id, preset) => {
      const devDependencies = readJson(join(repo, 'package.json'))['devDependencies'] as Record<string, string>
      // Exactly that version (no range), and the one installed here.
      expect(devDependencies[preset.npxPackage], `package.json devDependencies["${preset.npxPackage}"]`).toBe(preset.version)
      expect(readJson(join(repo, 'node_modules', preset.npxPackage, 'package.json'))['version']).toBe(preset.version)
    }
  )

  it('runs each preset at its pinned version when it is not installed', async () => {
    const presets = await defaultAgentPresets(UserEnvironment.of({ PATH: join(dir, 'bin') }))
    expect(presets.map((p) => runOf(p).args)).toEqual(PRESET_PACKAGES.map((p) => ['-y', `${p.npxPackage}@${p.version}`, ...p.binaryArgs]))
  })

  it('reads which version an agent runs, and moves it to another', () => {
    const [claude] = PRESET_PACKAGES
    expect(presetRunOf({ command: 'npx', args: ['-y', `${claude!.npxPackage}@0.49.0`] })).toMatchObject({
      presetId: 'claude-code',
      version: '0.49.0',
      tested: claude!.version
    })
    expect(presetRunOf({ command: 'npx', args: ['-y', claude!.npxPackage] })).toMatchObject({ version: null })
    expect(presetRunOf({ command: 'npx', args: ['-y', 'some-other-agent'] })).toBeNull()
    expect(presetRunOf({ command: 'claude-agent-acp', args: [] })).toBeNull()
    expect(withPresetVersion({ args: ['-y', '@google/gemini-cli@0.1.0', '--acp'] }, '@google/gemini-cli', '0.61.0')).toEqual([
      '-y',
      '@google/gemini-cli@0.61.0',
      '--acp'
    ])
  })
})
