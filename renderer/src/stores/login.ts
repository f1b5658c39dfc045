import { defineStore } from 'pinia'
import type { HostEvents, RequestParams, RequestResult } from '../../../shared/contract'
import { host } from '../host/client'

/** What a terminal sign-in's program did: printed (`output`) or ended (`exit`). */
export type LoginEvent =
  { type: 'agent.login.output'; payload: HostEvents['agent.login.output'] } | { type: 'agent.login.exit'; payload: HostEvents['agent.login.exit'] }

/**
 * Terminal sign-ins (an ACP terminal auth method): the agent's login program
 * runs in a pseudo-terminal on the Host, and the dialog that shows it
 * (LoginTerminal.vue) starts it, types into it, resizes and stops it here.
 * Its output and end come as Host events (the event router hands them in):
 * a stream for the terminal that listens, not state to keep.
 */
export const useLoginStore = defineStore('login', () => {
  const listeners = new Set<(event: LoginEvent) => void>()

  /** Hears every sign-in's output and end (the listener picks its own by `loginId`); returns how to stop. */
  function listen(listener: (event: LoginEvent) => void): () => void {
    listeners.add(listener)
    return () => listeners.delete(listener)
  }

  function receive(event: LoginEvent): void {
    for (const listener of listeners) listener(event)
  }

  /** Starts the login program at the terminal's size; throws the Host's message. */
  function start(params: RequestParams<'agents.login.start'>): Promise<RequestResult<'agents.login.start'>> {
    return host().request('agents.login.start', params)
  }

  // Typing, resizing and stopping are best effort: a sign-in that ended meanwhile has nothing to take them.

  function input(loginId: string, data: string): void {
    void host()
      .request('agents.login.input', { loginId, data })
      .catch(() => undefined)
  }

  function resize(loginId: string, cols: number, rows: number): void {
    void host()
      .request('agents.login.resize', { loginId, cols, rows })
      .catch(() => undefined)
  }

  function stop(loginId: string): void {
    void host()
      .request('agents.login.stop', { loginId })
      .catch(() => undefined)
  }

  return { listen, receive, start, input, resize, stop }
})
