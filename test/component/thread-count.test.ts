// @vitest-environment happy-dom
import './happy-dom-fixes'
import { afterEach, expect, it } from 'vitest'
import { nextTick, reactive } from 'vue'
import { mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import type { ThreadEntry } from '../../shared/thread'
import ThreadView from '../../renderer/src/components/thread/ThreadView.vue'

afterEach(() => {
  document.body.innerHTML = ''
})

/** The questions the thread holds (`data-user-entries`, what e2e/thread waits on after each prompt), rendered or not. */
it('counts the questions asked as they are added to the thread, and again when the thread is replaced', async () => {
  setActivePinia(createPinia())
  const turn = (n: number): ThreadEntry[] => [
    { kind: 'user', id: `u${n}`, text: `question ${n}` },
    { kind: 'assistant', id: `a${n}`, text: `answer ${n}` }
  ]
  const entries = reactive<ThreadEntry[]>([...turn(1), ...turn(2)])
  const view = mount(ThreadView, { props: { entries, loaded: true, running: false, agentName: 'Agent' }, attachTo: document.body })
  const asked = (): string | undefined => view.get('[data-testid=thread]').attributes('data-user-entries')
  expect(asked()).toBe('2')
  // A prompt sent: its entry is pushed on the same list.
  entries.push(...turn(3))
  await nextTick()
  expect(asked()).toBe('3')
  // A window that slides in place, its length kept: its first two entries swapped for two answers.
  entries.splice(0, 2, { kind: 'assistant', id: 'a8', text: 'answer 8' }, { kind: 'assistant', id: 'a9', text: 'answer 9' })
  await nextTick()
  expect(asked()).toBe('2')
  // A list replaced (a page taken in, a session/load replay).
  await view.setProps({ entries: reactive([...turn(7)]) })
  expect(asked()).toBe('1')
  view.unmount()
})
