import { describe, expect, it } from 'vitest'
import type { AgentDefinition } from '../../shared/agent-definition'
import type { RegistryAgent } from '../../shared/registry'
import { configuredAs } from '../../electron/host/acp-registry/configured'
import { PRESET_PACKAGES } from '../../electron/host/agents/presets'

/** A registry entry matched to the agent the user already has, set up otherwise than from the registry. */

const npxEntry = (id: string, pkg: string): RegistryAgent => ({
  id,
  name: id,
  version: pkg.slice(pkg.lastIndexOf('@') + 1),
  description: '',
  authors: [],
  distribution: { npx: { package: pkg, args: [], env: {} } }
})
const agent = (id: string, command: string, args: string[], extra: Partial<AgentDefinition> = {}): AgentDefinition => ({
  id,
  name: id,
  transport: { kind: 'process', command, args, env: {} },
  ...extra
})
const gemini = PRESET_PACKAGES.find((p) => p.presetId === 'gemini')!
const claude = PRESET_PACKAGES.find((p) => p.presetId === 'claude-code')!

describe('configuredAs', () => {
  it('matches the agent that runs the same npm package, with the version it runs; an older listing offers nothing', () => {
    const mine = agent('g', 'npx', ['-y', `${gemini.npxPackage}@${gemini.version}`, '--acp'])
    expect(configuredAs(npxEntry('gemini', '@google/gemini-cli@0.27.3'), [mine])).toEqual({ agentId: 'g', name: 'g', version: gemini.version })
  })

  it('offers the listed version to a preset that runs an older one of the same package', () => {
    const mine = agent('g', 'npx', ['-y', `${gemini.npxPackage}@${gemini.version}`])
    expect(configuredAs(npxEntry('gemini', '@google/gemini-cli@999.0.0'), [mine])?.update).toBe('999.0.0')
    // Not to a command of the user's own that is no preset: it is marked, not changed.
    const own = agent('q', 'npx', ['-y', '@qwen-code/qwen-code@0.1.0'])
    expect(configuredAs(npxEntry('qwen-code', '@qwen-code/qwen-code@0.9.1'), [own])).toEqual({ agentId: 'q', name: 'q', version: '0.1.0' })
  })

  it("knows the registry's entry of a preset published under another package, and a preset run from its installed command", () => {
    const viaNpx = agent('c', 'npx', ['-y', `${claude.npxPackage}@${claude.version}`])
    expect(configuredAs(npxEntry('claude-code-acp', '@zed-industries/claude-code-acp@0.16.0'), [viaNpx])).toEqual({
      agentId: 'c',
      name: 'c',
      version: claude.version
    })
    const installed = agent('claude-code', 'claude-agent-acp', [])
    expect(configuredAs(npxEntry('claude-code-acp', '@zed-industries/claude-code-acp@0.16.0'), [installed])).toEqual({
      agentId: 'claude-code',
      name: 'claude-code',
      version: null
    })
  })

  it('leaves alone agents installed from the registry and entries nobody set up', () => {
    const fromRegistry = agent('g', 'npx', ['-y', '@google/gemini-cli@0.27.3'], {
      origin: { registryId: 'gemini', version: '0.27.3', kind: 'npx' }
    })
    expect(configuredAs(npxEntry('gemini', '@google/gemini-cli@0.27.3'), [fromRegistry])).toBeUndefined()
    expect(configuredAs(npxEntry('auggie', '@augmentcode/auggie@0.15.0'), [agent('x', 'my-agent', [])])).toBeUndefined()
  })
})
