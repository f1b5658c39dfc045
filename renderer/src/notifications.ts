import type { HostEvent } from '../../shared/contract'
import type { InboxItem } from '../../shared/inbox'
import { sessionLink } from '../../shared/navigation'
import { stopReasonWords } from '../../shared/stop-reasons'
import { LIMITS, revealText, shortText } from './agent-text'

/**
 * OS notifications for what needs the user while they are elsewhere, driven
 * by the inbox (`inbox.changed`): one for each item that was not in it
 * before (a permission request, a question, a sign-in, a turn that failed or
 * finished). Only while the window is not focused or hidden; clicking one
 * brings the window back to it: one about a session carries its
 * switchboard://session/<id> link and follows it (commands.ts `followLink`),
 * the way a link from outside goes. Uses the web Notification API (Electron
 * shows it natively; a browser asks permission first).
 */

/** The user is not looking at the window. */
export function isAway(page: { hasFocus: boolean; hidden: boolean }): boolean {
  return page.hidden || !page.hasFocus
}

/** The agent's words in a notification: the system shows them with no marks of ours, so overrides are written out (⟨RLO⟩) and length is cut. */
function said(text: string): string {
  const { text: short, cut } = shortText(text, LIMITS.inlineChars)
  return revealText(short) + (cut ? '…' : '')
}

export function notificationText(item: InboxItem): { title: string; body: string } {
  const agent = item.agent.name
  const session = item.session ? said(item.session.title) : ''
  const where = session ? ` — in “${session}”` : ''
  switch (item.kind) {
    case 'permission':
      return { title: `${agent} asks for permission`, body: `${said(item.permission.title)}${where}` }
    case 'elicitation':
      return { title: `${agent} asks you`, body: `${said(item.elicitation.message)}${where}` }
    case 'sign_in':
      return { title: `${agent} needs you to sign in`, body: said(item.summary) }
    case 'error':
      return { title: `${agent} stopped with an error`, body: `“${session}”: ${said(item.message)}` }
    case 'finished':
      // Finished, or stopped short (a limit, a refusal): said as the thread says it.
      return item.stopReason === 'end_turn'
        ? { title: `${agent} finished`, body: `“${session}” is waiting for you` }
        : { title: `${agent}: ${stopReasonWords(item.stopReason)}`, body: `“${session}” is waiting for you` }
  }
}

export interface NotifierDeps {
  /** The inbox as the window has it before this batch (the store, before it applies the batch). */
  known: () => InboxItem[]
  /** Brings the item into view (after the window was focused): its session's link, else (an agent's item) the item itself. */
  open: (item: InboxItem, link: string | null) => void
  page?: () => { hasFocus: boolean; hidden: boolean }
  show?: (title: string, options: NotificationOptions, onClick: () => void) => void
}

/**
 * Watches the Host's event batches for what is new in the inbox and shows a
 * notification for each new item while the user is away. Returns the batch
 * listener (for host().onBatch, registered before the stores apply the batch).
 */
export function createNotifier(deps: NotifierDeps): (events: HostEvent[]) => void {
  const page = deps.page ?? (() => ({ hasFocus: document.hasFocus(), hidden: document.visibilityState === 'hidden' }))
  const show = deps.show ?? showWebNotification
  return (events) => {
    let before: Set<string> | null = null
    for (const event of events) {
      if (event.type !== 'inbox.changed') continue
      before ??= new Set(deps.known().map((i) => i.id))
      const fresh = event.payload.filter((item) => !before?.has(item.id))
      before = new Set(event.payload.map((i) => i.id))
      if (!isAway(page())) continue
      for (const item of fresh) {
        const { title, body } = notificationText(item)
        const link = item.session ? sessionLink(item.session.id) : null
        show(title, { body, tag: item.id, data: link }, () => {
          window.focus()
          deps.open(item, link)
        })
      }
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
