// @vitest-environment happy-dom
import './happy-dom-fixes'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { defineComponent, h } from 'vue'
import type { TranscriptRecord } from '../../shared/transcript'
import RecordsEdge from '../../renderer/src/components/thread/RecordsEdge.vue'
import { useThreadsStore } from '../../renderer/src/stores/threads'
import { FakeHost, sessionRecord } from './fake-host'

/**
 * The edge above a long conversation opened at its end loads the earlier part
 * when the reader comes near it, and only then. The browser's observer hands
 * over each sighting of the edge in a task of its own, taken at a frame: the
 * conversation's records can arrive in between and move the view to its end,
 * so a sighting may say "in view" of an edge that has left it. Trusted, it
 * read a page the reader never reached (e2e/recovery counted 240 entries at
 * first where the window had opened 80, once in a loaded CI).
 */

const at = '2026-01-01T00:00:00.000Z'
const record = sessionRecord('A long day', at)
const tail: TranscriptRecord[] = [
  { t: 'prompt', at, content: [{ type: 'text', text: 'question 1000' }] },
  { t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', messageId: 'm1000', content: { type: 'text', text: 'answer' } } },
  { t: 'stop', at, stopReason: 'end_turn' }
]

const first: TranscriptRecord[] = [
  { t: 'prompt', at, content: [{ type: 'text', text: 'question 1' }] },
  { t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: 'answer' } } },
  { t: 'stop', at, stopReason: 'end_turn' }
]

/** The observer the edge makes, whose sightings the test hands over when it likes. */
let sight: (isIntersecting: boolean) => void = () => undefined
class HeldObserver {
  constructor(private readonly callback: IntersectionObserverCallback) {
    sight = (isIntersecting) => {
      const entry: Pick<IntersectionObserverEntry, 'isIntersecting'> = { isIntersecting }
      this.callback([entry as IntersectionObserverEntry], this as unknown as IntersectionObserver)
    }
  }
  observe(): void {}
  disconnect(): void {}
}

/** Where an element is on screen (px from the window's top): happy-dom lays nothing out. */
function placeAt(el: Element, top: number, height: number): void {
  const box: DOMRect = { top, bottom: top + height, left: 0, right: 800, width: 800, height, x: 0, y: top, toJSON: () => ({}) }
  el.getBoundingClientRect = () => box
}

let host: FakeHost
let wrapper: VueWrapper | undefined
const realObserver = globalThis.IntersectionObserver

beforeEach(async () => {
  setActivePinia(createPinia())
  globalThis.IntersectionObserver = HeldObserver as unknown as typeof IntersectionObserver
  host = new FakeHost()
    .answer('sessions.open', () => ({
      record,
      state: { id: 's1', status: 'idle' },
      records: tail,
      nextSeq: 3001,
      skippedLines: 0,
      firstSeq: 2998,
      firstOffset: 90_000
    }))
    // The earlier part is the conversation's beginning: one page, then nothing more above.
    .answer('transcripts.read', () => ({ records: first, firstSeq: 0, firstOffset: 0, skippedLines: 0 }))
    .install()
  await useThreadsStore().load('s1')
  const view = defineComponent({
    render: () => h('div', { class: 'thread-scroll' }, [h(RecordsEdge, { sessionId: 's1', side: 'earlier' })])
  })
  wrapper = mount(view, { attachTo: document.body })
  await flushPromises()
  placeAt(wrapper.get('.thread-scroll').element, 100, 400)
})
afterEach(() => {
  wrapper?.unmount()
  globalThis.IntersectionObserver = realObserver
})

describe('the edge above a long conversation', () => {
  it('reads no earlier page on a sighting older than the view: the reader is at the end, the edge far above', async () => {
    expect(wrapper!.find('[data-testid="load-earlier"]').exists()).toBe(true)
    placeAt(wrapper!.get('.edge').element, 100 - 13_000, 36)
    sight(true)
    await flushPromises()
    expect(host.calls('transcripts.read')).toEqual([])
  })

  it('reads the earlier page once the reader comes within reach of the edge', async () => {
    placeAt(wrapper!.get('.edge').element, 100 - 200, 36)
    sight(true)
    await flushPromises()
    expect(host.calls('transcripts.read')).toHaveLength(1)
    expect(wrapper!.find('[data-testid="load-earlier"]').exists()).toBe(false)
  })
})
