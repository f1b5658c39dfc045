import { describe, expect, it } from 'vitest'
import { waitUntil } from '../helpers'
import { addClaudeAgent, offlineClaudePerTest } from '../real/claude'
import { promptOf } from '../real/fake-anthropic'

/**
 * "Edit and resend" with real Claude Code (claude-agent-acp 0.101), offline
 * against the fake Messages API: Claude Code forks its own session at the
 * reply before the edited message (`session/fork` with
 * `_meta.jetbrains.air.fork`, sessions/fork-at-message.ts), so the model is
 * sent the conversation up to that reply and the edited message, and nothing
 * of the messages after it.
 */

const run = offlineClaudePerTest('claude-edit')

describe('edit and resend with real Claude Code, offline', () => {
  it('the model gets the earlier turns and the edited message, not the later turns; the original goes on whole', async () => {
    const agentId = await addClaudeAgent(run)
    const projectId = (await run.host.request('projects.add', { cwd: run.project })).id
    const { id } = await run.host.request('sessions.new', { projectId, agentId })
    for (const text of ['The first question', 'The second question', 'The third question']) {
      expect(await run.host.request('sessions.prompt', { id, text })).toEqual({ stopReason: 'end_turn' })
    }
    const { records } = await run.host.request('sessions.open', { id })
    let count = 0
    const seq = records.findIndex((r) => r.t === 'prompt' && ++count === 2)

    const sent = run.api.main().length
    const result = await run.host.request('sessions.editResend', { id, seq, text: 'The second question, edited', conversationOnly: true })
    expect(result.forked).toBe(true)
    const turn = await waitUntil('Claude Code to ask the model for the edited message', () => run.api.main()[sent])
    expect(promptOf(turn)).toBe('The second question, edited')
    const shown = JSON.stringify(turn.messages)
    expect(shown).toContain('The first question')
    expect(shown).toContain('Echo: The first question')
    expect(shown).not.toMatch(/The second question"|The third question|Echo: The second/)
    // No seed was needed: the conversation is the agent's own.
    expect(shown).not.toContain('[Switchboard]')

    // The original still holds all three turns, for the agent too.
    expect(await run.host.request('sessions.prompt', { id, text: 'And a fourth' })).toEqual({ stopReason: 'end_turn' })
    expect(JSON.stringify(run.api.main().at(-1)?.messages)).toContain('The third question')
  }, 120_000)
})
