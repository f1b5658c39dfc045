import { describe, expect, it } from 'vitest'
import { problemLabel, problemSentence, problemTitle, shortReason } from '../../shared/agent-problem'
import type { AgentProblem, AgentRuntimeState, SessionState } from '../../shared/domain'
import { stopReasonSentence, stopReasonWords } from '../../shared/stop-reasons'
import { agentStatusKind, agentStatusLabel, sessionBadge } from '../../renderer/src/components/sidebar/status'

const at = '2026-11-25T10:00:00.000Z'
const signIn: AgentProblem = {
  agentId: 'gemini',
  kind: 'sign_in',
  summary: 'Gemini CLI needs you to sign in first.',
  detail: 'Gemini API key is missing or not configured.',
  lines: [],
  found: false,
  at
}
const failing: AgentProblem = {
  agentId: 'claude',
  kind: 'session_failed',
  summary: 'Claude Code could not start a session.',
  detail: 'Claude Code process exited with code 1',
  lines: [],
  found: false,
  at
}
const crashed: AgentProblem = {
  agentId: 'custom',
  kind: 'start_failed',
  summary: "Agent 'Half-built' exited during initialize with code 1.",
  lines: ["Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'tsx' imported from /home/me/agent.mjs"],
  found: true,
  at
}

describe("the words for an agent's problem", () => {
  it('one sentence: the summary and what the agent said, one full stop (never ".).")', () => {
    expect(problemSentence(signIn)).toBe('Gemini CLI needs you to sign in first: Gemini API key is missing or not configured.')
    expect(problemSentence(failing)).toBe('Claude Code could not start a session: Claude Code process exited with code 1.')
    expect(problemSentence(crashed)).toBe("Agent 'Half-built' exited during initialize with code 1.")
    // "Authentication required" adds nothing to "needs you to sign in".
    expect(problemSentence({ ...signIn, summary: 'Codex needs you to sign in first.', detail: 'Authentication required' })).toBe(
      'Codex needs you to sign in first.'
    )
  })

  it('a title and a short status', () => {
    expect(problemTitle(signIn, 'Gemini CLI')).toBe('Sign in to Gemini CLI')
    expect(problemTitle(crashed, 'Half-built')).toBe('Half-built could not start')
    expect(problemTitle({ ...crashed, kind: 'not_installed' }, 'Ghost')).toBe('Ghost is not installed')
    expect(problemLabel(signIn)).toBe('needs sign-in')
    expect(problemLabel(failing)).toBe('failing: Claude Code process exited with code 1')
    // Without what the agent said, the line found in its stderr, cut short.
    expect(problemLabel(crashed)).toBe("failing: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'tsx' imp…")
    expect(shortReason(crashed, 20)).toHaveLength(20)
  })
})

describe("an agent's status: ready only where it can start a session", () => {
  const base: AgentRuntimeState = { agentId: 'a', status: 'ready', stderrTail: '' }

  it('a running process that has started no session is running; once it has, ready', () => {
    expect(agentStatusLabel(base)).toBe('running')
    expect(agentStatusKind(base)).toBe('running')
    expect(agentStatusLabel({ ...base, sessionStarted: true })).toBe('ready')
    expect(agentStatusKind({ ...base, sessionStarted: true })).toBe('ready')
  })

  it('one that could not start a session says why, running or not', () => {
    expect(agentStatusLabel({ ...base, problem: signIn })).toBe('needs sign-in')
    expect(agentStatusLabel({ ...base, sessionStarted: true, problem: failing })).toBe('failing: Claude Code process exited with code 1')
    expect(agentStatusKind({ ...base, problem: signIn })).toBe('problem')
    expect(agentStatusLabel({ ...base, status: 'stopped', problem: signIn })).toBe('needs sign-in')
    expect(agentStatusLabel({ ...base, status: 'exited', problem: crashed })).toMatch(/^failing: Error \[ERR_MODULE_NOT_FOUND\]/)
    expect(agentStatusLabel({ ...base, status: 'exited' })).toBe('exited')
    expect(agentStatusLabel({ ...base, status: 'stopped', installed: false })).toBe('not installed')
  })

  it('beside a session that is not connected, a ready agent is only running', () => {
    expect(agentStatusLabel({ ...base, sessionStarted: true }, 'idle')).toBe('running')
    expect(agentStatusLabel({ ...base, sessionStarted: true }, 'ready')).toBe('ready')
  })
})

describe("a session's header badge: calm at rest", () => {
  const idle: SessionState = { id: 's', status: 'idle' }

  it('an idle session is only idle (no fault, no call to action); its agent starting is said by name', () => {
    expect(sessionBadge(idle, 'Claude Code')).toEqual({ kind: 'idle', label: 'Idle', short: '' })
    expect(sessionBadge({ ...idle, status: 'starting' }, 'Claude Code')).toMatchObject({ kind: 'starting', label: 'Starting Claude Code…' })
    expect(sessionBadge({ ...idle, status: 'starting' }, 'Claude Code', true)).toMatchObject({ label: 'Reopening…' })
  })

  it('work, a question for the user, and failures each have their word', () => {
    expect(sessionBadge({ ...idle, status: 'ready' }, 'A').label).toBe('Ready')
    expect(sessionBadge({ ...idle, status: 'running' }, 'A').label).toBe('Working…')
    const asking = { ...idle, status: 'running' as const, permissions: [{ requestId: 'r', title: 'Run tests', options: [] }] }
    expect(sessionBadge(asking, 'A')).toEqual({ kind: 'waiting', label: 'Waiting for you', short: 'Needs you' })
    expect(sessionBadge({ ...idle, status: 'error', error: 'x' }, 'A')).toMatchObject({ kind: 'error', label: 'Error' })
    expect(sessionBadge({ ...idle, status: 'error', reopenFailed: 'no' }, 'A')).toMatchObject({ kind: 'error', label: 'Not reopened' })
    // Idle because its agent exited on its own (what it said is the error): said so; Switchboard's own stops leave no error.
    expect(sessionBadge({ ...idle, error: "Agent 'A' exited with code 0" }, 'A')).toMatchObject({ kind: 'error', label: 'Agent exited' })
  })
})

describe('how a turn ended, in words', () => {
  it('never the protocol’s stop reason as it is', () => {
    expect(['end_turn', 'cancelled', 'max_tokens', 'max_turn_requests', 'refusal'].map(stopReasonWords)).toEqual([
      'Finished',
      'Cancelled',
      'Stopped: token limit',
      'Stopped: turn limit',
      'Refused'
    ])
    expect(stopReasonWords('out_of_credit')).toBe('Stopped: out of credit')
    expect(stopReasonSentence('max_tokens')).toBe('Stopped: it reached its token limit.')
    expect(stopReasonSentence('end_turn')).toBe('Finished: its answer is waiting for you.')
  })
})
