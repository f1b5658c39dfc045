// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { PendingPermission } from '../../shared/domain'
import type { InboxItem } from '../../shared/inbox'
import InboxDialog from '../../renderer/src/components/inbox/InboxDialog.vue'
import { useInboxStore } from '../../renderer/src/stores/inbox'
import { useNoticesStore } from '../../renderer/src/stores/notices'
import { useSessionsStore } from '../../renderer/src/stores/sessions'
import { FakeHost } from './fake-host'

/**
 * A permission request waits in two places: its card in the session's pane
 * (drawn from the session's state, SessionView.vue) and its item in the
 * inbox. Answered from either, it goes from both at once (a second key press
 * must not answer twice); when the Host refuses the answer, it comes back in
 * both and the banner says why. The Host's answers come when the test says.
 */

const permission: PendingPermission = {
  requestId: 'r1',
  title: 'Run npm test',
  options: [
    { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'reject', name: 'Reject once', kind: 'reject_once' }
  ]
}
const item: InboxItem = {
  id: 'permission:r1',
  kind: 'permission',
  at: '2026-01-01T00:00:00.000Z',
  agent: { id: 'a1', name: 'Claude Code' },
  project: { id: 'p1', name: 'shop' },
  session: { id: 's1', title: 'Cart' },
  permission
}

let fake: FakeHost
let answers: { params: unknown; settle: (refusal?: string) => void }[]

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  answers = []
  fake = new FakeHost({
    'sessions.respondPermission': (params: unknown) =>
      new Promise((resolve, reject) => answers.push({ params, settle: (refusal) => (refusal ? reject(new Error(refusal)) : resolve({})) }))
  }).install()
  useSessionsStore().receiveState({ id: 's1', status: 'running', permissions: [permission] })
  useInboxStore().receive([item])
})

/** The requests the pane shows cards for (SessionView's `permissions`). */
const paneCards = (): string[] => (useSessionsStore().stateOf('s1').permissions ?? []).map((p) => p.requestId)
const inboxItems = (): string[] => useInboxStore().waiting.map((i) => i.id)

function openInbox() {
  useInboxStore().show()
  return mount(InboxDialog, { attachTo: document.body })
}

const optionButton = (name: string): HTMLButtonElement => {
  const button = [...document.querySelectorAll<HTMLButtonElement>('[data-testid=inbox-item] button')].find((b) => b.textContent?.includes(name))
  if (!button) throw new Error(`No option ${name} in the inbox`)
  return button
}

describe('a permission answered from the inbox', () => {
  it('goes from the pane and the inbox at once, through the sessions store, and is answered once', async () => {
    const inbox = openInbox()
    await flushPromises()
    expect(inbox.findAll('[data-testid=inbox-item]')).toHaveLength(1)

    optionButton('Allow once').click()
    await flushPromises()
    expect(paneCards()).toEqual([])
    expect(inboxItems()).toEqual([])
    expect(inbox.findAll('[data-testid=inbox-item]')).toHaveLength(0)
    // A second answer while the first is on its way is not sent.
    await useSessionsStore().respondPermission('s1', 'r1', 'reject')
    expect(fake.sent('sessions.respondPermission')).toEqual([{ id: 's1', requestId: 'r1', optionId: 'allow' }])

    answers[0].settle()
    await flushPromises()
    expect(paneCards()).toEqual([])
    expect(useNoticesStore().errors).toEqual([])
    inbox.unmount()
  })

  it('comes back in the pane and the inbox when the Host refuses the answer, and the banner says why', async () => {
    const inbox = openInbox()
    await flushPromises()
    optionButton('Reject once').click()
    await flushPromises()
    expect(paneCards()).toEqual([])
    expect(inboxItems()).toEqual([])

    answers[0].settle("'reject' is not one of the options the agent offered (allow)")
    await flushPromises()
    expect(paneCards()).toEqual(['r1'])
    expect(inboxItems()).toEqual(['permission:r1'])
    expect(inbox.findAll('[data-testid=inbox-item]')).toHaveLength(1)
    expect(useNoticesStore().errors).toEqual(["'reject' is not one of the options the agent offered (allow)"])
    inbox.unmount()
  })
})

describe('a permission answered from its pane', () => {
  it('goes from the inbox too, and comes back in both when refused', async () => {
    const answered = useSessionsStore().respondPermission('s1', 'r1', 'allow')
    expect(paneCards()).toEqual([])
    expect(inboxItems()).toEqual([])
    answers[0].settle('The session s1 has no permission request r1 waiting')
    expect(await answered).toBe(false)
    expect(paneCards()).toEqual(['r1'])
    expect(inboxItems()).toEqual(['permission:r1'])
    expect(useNoticesStore().errors).toEqual(['The session s1 has no permission request r1 waiting'])
  })

  it('stays gone when the Host said meanwhile what waits (a newer state), even if the answer is refused', async () => {
    const answered = useSessionsStore().respondPermission('s1', 'r1', 'allow')
    // The request ended another way (the turn was cancelled): the Host's state has no card.
    useSessionsStore().receiveState({ id: 's1', status: 'idle' })
    answers[0].settle('The session s1 has no permission request r1 waiting')
    await answered
    expect(paneCards()).toEqual([])
  })
})
