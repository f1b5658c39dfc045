// @vitest-environment happy-dom
import './happy-dom-fixes'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { defineComponent, h } from 'vue'
import { mount } from '@vue/test-utils'
import { readerFling } from '../../renderer/src/components/thread/fling'

/**
 * The thread's fling (fling.ts): scroll events more than a screen apart, two in a row, are a fling, during which the
 * thread draws only the rows in view (and one ahead) and shows their markdown as text; it ends 200 ms after the last
 * leap, and a leap soon after its end goes on with it. What a reader notices: a jump (one leap: to an entry, to the
 * end) draws the rows around the view at once; a fling does not hold each frame with rows it leaves the next.
 */
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'requestAnimationFrame', 'cancelAnimationFrame', 'performance'] })
})
afterEach(() => {
  vi.useRealTimers()
  document.body.innerHTML = ''
})

function withFling() {
  let fling!: ReturnType<typeof readerFling>
  const view = mount(
    defineComponent({
      setup() {
        fling = readerFling()
        return () => h('div')
      }
    }),
    { attachTo: document.body }
  )
  return { fling, view }
}

const VIEW = 500
const range = { startIndex: 10, endIndex: 14, overscan: 0, count: 100 }

it('takes two leaps in a row for a fling, not one, and ends it 200 ms after the last', () => {
  const { fling, view } = withFling()
  fling.moved(100, VIEW) // a small move
  expect(fling.flinging.value).toBe(false)
  fling.moved(1_000, VIEW) // one leap: a jump
  expect(fling.flinging.value).toBe(false)
  fling.moved(1_900, VIEW) // a second in a row
  expect(fling.flinging.value).toBe(true)
  vi.advanceTimersByTime(150)
  fling.moved(2_800, VIEW)
  vi.advanceTimersByTime(150)
  expect(fling.flinging.value).toBe(true) // still within 200 ms of the last leap
  vi.advanceTimersByTime(60)
  expect(fling.flinging.value).toBe(false)
  view.unmount()
})

it('goes on with a leap soon after its end, and not with one long after', () => {
  const { fling, view } = withFling()
  fling.moved(1_000, VIEW)
  fling.moved(2_000, VIEW)
  vi.advanceTimersByTime(250)
  expect(fling.flinging.value).toBe(false)
  fling.moved(2_050, VIEW) // a small move: the leaps in a row end
  fling.moved(3_050, VIEW) // one leap, 50 ms after the end
  expect(fling.flinging.value).toBe(true)
  vi.advanceTimersByTime(250 + 1_000)
  fling.moved(3_100, VIEW) // a small move
  fling.moved(4_100, VIEW) // one leap, over a second after the end: a jump
  expect(fling.flinging.value).toBe(false)
  view.unmount()
})

it('takes a move of the list’s own (a row measured above the view) for neither a leap nor a step: the leaps in a row go on through it', () => {
  const { fling, view } = withFling()
  fling.moved(1_000, VIEW) // a leap
  fling.followed(1_100) // the list moved the view by a row's change
  fling.moved(2_050, VIEW) // the second leap in a row, counted from where the list put the view
  expect(fling.flinging.value).toBe(true)
  vi.advanceTimersByTime(150)
  fling.followed(2_060)
  fling.moved(3_000, VIEW) // it goes on: 200 ms from here
  vi.advanceTimersByTime(150)
  expect(fling.flinging.value).toBe(true)
  fling.followed(10_000) // the list's own jump (to the end) is no leap of the reader's
  vi.advanceTimersByTime(60)
  expect(fling.flinging.value).toBe(false)
  view.unmount()
})

it('draws the rows in view and the one ahead while the leaps are short, none ahead when they are long', () => {
  const { fling, view } = withFling()
  fling.moved(700, VIEW)
  fling.moved(1_400, VIEW) // down, 1.4 screens a leap
  expect(fling.rows(range)).toEqual([10, 11, 12, 13, 14, 15])
  fling.moved(700, VIEW) // up
  expect(fling.rows(range)).toEqual([9, 10, 11, 12, 13, 14])
  fling.moved(-800, VIEW) // up, 3 screens
  expect(fling.rows(range)).toEqual([10, 11, 12, 13, 14])
  view.unmount()
})

/**
 * A push of the wheel against an edge of what the list holds: up where earlier entries are read (`earlier`), down where
 * the list let go of the conversation's end (`detached`); the same push at the conversation's own start or end does not
 * keep the fling.
 */
it.each([
  {
    where: 'up, where earlier entries are read, not at the conversation’s start',
    edges: { earlier: true, detached: false, viewHeight: VIEW, totalSize: 10_000, slack: 24 },
    flungTo: 0, // the top of what the list holds
    push: -120,
    ownEnd: { earlier: false }
  },
  {
    where: 'down, where the list let go of the end, not at the conversation’s end',
    edges: { earlier: false, detached: true, viewHeight: VIEW, totalSize: 3_000, slack: 24 },
    flungTo: 2_490, // the bottom of what the list holds (2,490 + 500 within 24 px of 3,000)
    push: 120,
    ownEnd: { detached: false }
  }
])('goes on while the wheel pushes $where', ({ edges, flungTo, push, ownEnd }) => {
  const { fling, view } = withFling()
  fling.moved(1_000, VIEW)
  fling.moved(flungTo, VIEW)
  vi.advanceTimersByTime(150)
  fling.wheel(push, () => edges)
  vi.advanceTimersByTime(150)
  expect(fling.flinging.value).toBe(true) // 300 ms after the last leap
  fling.wheel(push, () => ({ ...edges, ...ownEnd }))
  vi.advanceTimersByTime(100)
  expect(fling.flinging.value).toBe(false) // 200 ms after the last push
  fling.wheel(-120, () => edges) // no fling to go on with
  expect(fling.flinging.value).toBe(false)
  view.unmount()
})

/**
 * The page stalled past the fling's 200 ms (a long render, a collection, another process on the cores): the timer is due
 * before the frame that brings the wheel's next event. The fling ends only in a frame that brings none.
 */
it('goes on through a stall of the page while the wheel pushes, and ends in the first frame without a push', () => {
  const { fling, view } = withFling()
  const edges = { earlier: true, detached: false, viewHeight: VIEW, totalSize: 10_000, slack: 24 }
  fling.moved(1_000, VIEW)
  fling.moved(0, VIEW) // at the top of what the list holds
  fling.wheel(-120, () => edges)
  vi.advanceTimersByTime(200) // the stall: the timer is due, the frame not yet come
  fling.wheel(-120, () => edges) // the frame's wheel event, before its callbacks
  expect(fling.flinging.value).toBe(true)
  vi.advanceTimersByTime(190)
  expect(fling.flinging.value).toBe(true) // 190 ms after the last push
  vi.advanceTimersByTime(30) // the timer, then a frame without a push
  expect(fling.flinging.value).toBe(false)
  view.unmount()
})

it('stops its timer when the thread goes away', () => {
  const { fling, view } = withFling()
  fling.moved(1_000, VIEW)
  fling.moved(2_000, VIEW)
  vi.advanceTimersByTime(200) // the timer due, its frame asked for
  view.unmount()
  expect(vi.getTimerCount()).toBe(0)
})
