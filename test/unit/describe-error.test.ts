import { RequestError } from '@agentclientprotocol/sdk'
import { describe, expect, it } from 'vitest'
import { describeError } from '../../electron/host/errors'

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
})
