import { RequestError } from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import { knownCause } from '../../electron/host/connection/quirks'
import { agentReason, describeError, failureText, withoutFullStop } from '../../electron/host/contract/errors'

describe('an agent error says what the agent explained, once', () => {
  it("Codex's data.message (its codex_error_info code left out)", () => {
    const error = new RequestError(-32603, 'Internal error', { message: 'Missing environment variable: OPENAI_API_KEY', codex_error_info: 'other' })
    expect(describeError(error)).toBe('Internal error: Missing environment variable: OPENAI_API_KEY')
  })

  it("claude-agent-acp's data.details, and a string data", () => {
    expect(describeError(new RequestError(-32603, 'Internal error', { details: 'Claude Code process exited with code 1' }))).toBe(
      'Internal error: Claude Code process exited with code 1'
    )
    expect(describeError(new RequestError(-32603, 'Internal error', 'the model is overloaded'))).toBe('Internal error: the model is overloaded')
  })

  it('several explanations in order, none repeated, nothing added when the message already says it', () => {
    const error = new RequestError(-32603, 'Internal error', {
      message: 'stream disconnected before completion',
      details: 'stream disconnected before completion',
      error: { message: 'HTTP 500: upstream failed' },
      hint: 'try again in a minute'
    })
    expect(describeError(error)).toBe('Internal error: stream disconnected before completion; HTTP 500: upstream failed; try again in a minute')
    expect(describeError(new RequestError(-32000, 'Authentication required: key missing', { message: 'key missing' }))).toBe(
      'Authentication required: key missing'
    )
    expect(describeError(new Error('plain'))).toBe('plain')
  })

  it("an HTTP error body passed on as JSON text (Codex's 400) is read for its message, not shown raw", () => {
    const body = JSON.stringify({ error: { message: 'The model `gpt-x` does not exist.', type: 'invalid_request_error', code: 'model_not_found' } })
    expect(describeError(new RequestError(-32603, 'Internal error', { message: body, codex_error_info: 'other' }))).toBe(
      'Internal error: The model `gpt-x` does not exist.'
    )
    expect(describeError(new RequestError(-32603, 'Internal error', body))).toBe('Internal error: The model `gpt-x` does not exist.')
    expect(describeError(new RequestError(-32603, 'Internal error', '{not json'))).toBe('Internal error: {not json')
  })

  it('never reads "Internal error" alone: a generic message without details says that the agent gave none', () => {
    expect(describeError(new RequestError(-32603, 'Internal error'))).toBe('Internal error (the agent gave no details)')
    expect(describeError(new RequestError(-32603, 'Internal error', {}))).toBe('Internal error (the agent gave no details)')
    expect(describeError(new RequestError(-32603, 'Internal error.', { codex_error_info: 'other' }))).toBe(
      'Internal error (the agent gave no details)'
    )
  })
})

describe('a failure an agent streamed as text (Codex 2.x)', () => {
  it('an HTTP error body is read for its message; other words are kept as they are, trimmed', () => {
    const body = JSON.stringify({
      error: { message: 'The model `gpt-x` does not exist.', type: 'invalid_request_error', code: 'model_not_found', param: null }
    })
    expect(failureText(`${body}\n\n`)).toBe('The model `gpt-x` does not exist.')
    expect(failureText('We’re currently experiencing high demand, which may cause temporary errors.\n\n')).toBe(
      'We’re currently experiencing high demand, which may cause temporary errors.'
    )
    expect(failureText('{not json\n')).toBe('{not json')
    expect(failureText('')).toBe('')
  })
})

describe('what an agent said, inside a sentence of ours', () => {
  it('the details rather than the generic message, without a closing full stop', () => {
    expect(agentReason(new RequestError(-32603, 'Internal error', { details: 'Claude Code process exited with code 1' }))).toBe(
      'Claude Code process exited with code 1'
    )
    // claude-agent-acp 0.101 puts the cause in the message itself, after a generic "Internal error: ".
    expect(agentReason(new RequestError(-32603, 'Internal error: --dangerously-skip-permissions cannot be used with root/sudo privileges.'))).toBe(
      '--dangerously-skip-permissions cannot be used with root/sudo privileges'
    )
    // Gemini CLI ends its sentence with a full stop: ours goes after the parenthesis, once (not ".).").
    expect(agentReason(new RequestError(-32000, 'Gemini API key is missing or not configured.'))).toBe('Gemini API key is missing or not configured')
    expect(`(${agentReason(new RequestError(-32000, 'Gemini API key is missing or not configured.'))}).`).not.toContain('.).')
    // A specific message keeps what its data adds.
    expect(agentReason(new RequestError(-32603, 'Model overloaded', { details: 'try again in a minute' }))).toBe(
      'Model overloaded: try again in a minute'
    )
    expect(agentReason(new RequestError(-32603, 'Internal error'))).toBe('Internal error (the agent gave no details)')
    expect(withoutFullStop('Done. \n')).toBe('Done')
  })
})

describe('causes an agent does not pass on', () => {
  const said = 'Claude Code process exited with code 1'
  const claude = '@agentclientprotocol/claude-agent-acp'

  it('Claude Code as root with an IS_SANDBOX other than 1: it refuses to run, and the hint says what to do', () => {
    expect(knownCause(claude, said, {}, { IS_SANDBOX: 'yes' }, 0)).toBe(
      'Claude Code refuses to run as root with IS_SANDBOX=yes: it allows the root user only IS_SANDBOX=1. Give the agent the variable IS_SANDBOX=1 (in a container or sandbox), or run Switchboard as a normal user.'
    )
    // The agent's own variables win over the app's.
    expect(knownCause(claude, said, { IS_SANDBOX: 'true' }, {}, 0)).toMatch(/IS_SANDBOX=true/)
    // claude-agent-acp 0.101 passes the CLI's words on: the same hint.
    const newer = '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons'
    expect(knownCause(claude, newer, {}, { IS_SANDBOX: 'yes' }, 0)).toMatch(/refuses to run as root with IS_SANDBOX=yes/)
  })

  it('no hint where it does not apply: another user, IS_SANDBOX=1 or none, another agent or another failure', () => {
    expect(knownCause(claude, said, {}, { IS_SANDBOX: 'yes' }, 1000)).toBeUndefined()
    expect(knownCause(claude, said, { IS_SANDBOX: '1' }, { IS_SANDBOX: 'yes' }, 0)).toBeUndefined()
    expect(knownCause(claude, said, {}, {}, 0)).toBeUndefined()
    expect(knownCause('gemini-cli', said, {}, { IS_SANDBOX: 'yes' }, 0)).toBeUndefined()
    expect(knownCause(claude, 'Claude Code process exited with code 143', {}, { IS_SANDBOX: 'yes' }, 0)).toBeUndefined()
  })
})
