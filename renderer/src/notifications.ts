import type { HostEvent } from '../../shared/contract'
import type { SessionState } from '../../shared/domain'
import { LIMITS, revealText, shortText } from './agent-text'

/**
 * OS notifications for what needs the user while they are elsewhere: a turn
 * that ended (or failed), or a permission request waiting. Only while the window
 * is not focused or hidden; clicking one brings the window back to that session.
 * Uses the web Notification API (Electron shows it natively; a browser asks
 * permission first).
 */

export type Attention = { kind: 'turn-ended'; sessionId: string; error?: string } | { kind: 'permission'; sessionId: string; title: string }

/** What changed between two states of a session that the user should hear about, if anything. */
export function attentionFrom(previous: SessionState | undefined, next: SessionState): Attention | null {
  const request = next.permissions?.find((p) => !previous?.permissions?.some((q) => q.requestId === p.requestId))
  if (request) {
    return { kind: 'permission', sessionId: next.id, title: request.title }
  }
  if (previous?.status === 'running' && next.status !== 'running') {
    return next.error ? { kind: 'turn-ended', sessionId: next.id, error: next.error } : { kind: 'turn-ended', sessionId: next.id }
  }
  return null
}

/** The user is not looking at the window. */
export function isAway(page: { hasFocus: boolean; hidden: boolean }): boolean {
  return page.hidden || !page.hasFocus
}

/** The agent's words in a notification: the system shows them with no marks of ours, so overrides are written out (⟨RLO⟩) and length is cut. */
function said(text: string): string {
  const { text: short, cut } = shortText(text, LIMITS.inlineChars)
  return revealText(short) + (cut ? '…' : '')
}

export function notificationText(attention: Attention, sessionTitle: string, agentName: string): { title: string; body: string } {
  const session = said(sessionTitle)
  if (attention.kind === 'permission') {
    return { title: `${agentName} asks for permission`, body: `${said(attention.title)} — in “${session}”` }
  }
  if (attention.error) return { title: `${agentName} stopped with an error`, body: `“${session}”: ${said(attention.error)}` }
  return { title: `${agentName} finished`, body: `“${session}” is waiting for you` }
}

export interface NotifierDeps {
  /** Session title and agent name, for the text. */
  describe: (sessionId: string) => { sessionTitle: string; agentName: string }
  /** Brings the session into view (after the window was focused). */
  open: (sessionId: string) => void
  /** A session's state before this batch, for sessions not seen in an event yet (the store, before it applies the batch). */
  known?: (sessionId: string) => SessionState | undefined
  page?: () => { hasFocus: boolean; hidden: boolean }
  show?: (title: string, options: NotificationOptions, onClick: () => void) => void
}

/**
 * Watches the Host's event batches for attention-worthy state changes and shows a
 * notification while the user is away. Returns the batch listener (for
 * host().onBatch, registered before the stores apply the batch).
 */
export function createNotifier(deps: NotifierDeps): (events: HostEvent[]) => void {
  const last = new Map<string, SessionState>()
  const page = deps.page ?? (() => ({ hasFocus: document.hasFocus(), hidden: document.visibilityState === 'hidden' }))
  const show = deps.show ?? showWebNotification
  return (events) => {
    for (const event of events) {
      if (event.type === 'session.removed') last.delete(event.payload.id)
      if (event.type !== 'session.state') continue
      const previous = last.has(event.payload.id) ? last.get(event.payload.id) : deps.known?.(event.payload.id)
      const attention = attentionFrom(previous, event.payload)
      last.set(event.payload.id, event.payload)
      if (!attention || !isAway(page())) continue
      const { sessionTitle, agentName } = deps.describe(attention.sessionId)
      const { title, body } = notificationText(attention, sessionTitle, agentName)
      show(title, { body, tag: `${attention.kind}:${attention.sessionId}` }, () => {
        window.focus()
        deps.open(attention.sessionId)
      })
    }
  }
}

function showWebNotification(title: string, options: NotificationOptions, onClick: () => void): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return
  try {
    const notification = new Notification(title, options)
    notification.onclick = () => {
      onClick()
      notification.close()
    }
  } catch {
    // Some browsers only allow notifications from a service worker: nothing to show then.
  }
}

/**
 * A browser asks before showing notifications: ask once, on the user's first
 * click or key press (asking with no gesture is ignored or looks like spam).
 */
export function askNotificationPermissionOnFirstGesture(target: Window = window): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'default') return
  const ask = (): void => {
    target.removeEventListener('pointerdown', ask, true)
    target.removeEventListener('keydown', ask, true)
    if (Notification.permission === 'default') void Notification.requestPermission().catch(() => undefined)
  }
  target.addEventListener('pointerdown', ask, true)
  target.addEventListener('keydown', ask, true)
}
