// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { SessionRecord } from '../../shared/domain'
import type { ChangesResult, CheckpointView, FileChange } from '../../shared/workspace'
import ChangesPanel from '../../renderer/src/components/changes/ChangesPanel.vue'
import { FakeHost } from './fake-host'

/**
 * The Changes view answers each change of scope with the Host's answer for
 * that scope: in the moment between the choice and its answer, the files of
 * another scope's answer are never shown under it (a turn's files with Keep
 * and Revert, whose hunks are another comparison's, or the whole session's
 * as a turn's). Every answer here comes when the test says.
 */

const session: SessionRecord = {
  id: 's1',
  acpSessionId: null,
  agentId: 'a1',
  projectId: 'p1',
  cwd: '/work/shop',
  title: 'Cart',
  titleSource: 'user',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z'
}

const checkpoint = (index: number): CheckpointView => ({ index, at: '2026-01-01T00:00:00.000Z', label: 'turn', turn: index, commit: `c${index}` })
const file = (path: string): FileChange => ({ path, status: 'modified', binary: false, tooLarge: false, oldText: 'a\n', newText: 'b\n' })
const answerFor = (from: 'review' | number, ...paths: string[]): ChangesResult => ({
  available: true,
  kind: 'git',
  checkpoints: [checkpoint(1), checkpoint(2)],
  from,
  to: from === 'review' ? 'present' : 'turn-end',
  files: paths.map(file),
  truncated: false
})

let asked: { from: number | undefined; answer: (result: ChangesResult) => void }[]

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  asked = []
  new FakeHost({
    'changes.list': ({ from }: { from?: number }) => new Promise<ChangesResult>((resolve) => asked.push({ from, answer: resolve }))
  }).install()
})

describe('the Changes view', () => {
  it('shows an answer only under the scope it answers, whatever the order the answers come in', async () => {
    const panel = mount(ChangesPanel, { props: { session, rewindTo: null }, attachTo: document.body })
    await flushPromises()
    asked[0].answer(answerFor('review', 'cart.txt', 'NOTES.md', 'README.md'))
    await flushPromises()
    const paths = (): string[] => panel.findAll('[data-testid=change-path]').map((p) => p.text())
    const keeps = (): number => panel.findAll('[data-testid=file-keep]').length
    expect(paths()).toEqual(['cart.txt', 'NOTES.md', 'README.md'])
    expect(keeps()).toBe(3)

    // Turn 2 only: until its answer, none of the whole session's files are shown as the turn's.
    await panel.get('[data-testid=changes-scope]').setValue('2')
    await flushPromises()
    expect(asked.map((a) => a.from)).toEqual([undefined, 2])
    expect(paths()).toEqual([])
    expect(panel.find('[data-testid=changes-reading]').exists()).toBe(true)
    asked[1].answer(answerFor(2, 'README.md'))
    await flushPromises()
    expect(paths()).toEqual(['README.md'])
    expect(keeps()).toBe(0)

    // Back to the whole session: the turn's files are not offered to keep or revert meanwhile.
    await panel.get('[data-testid=changes-scope]').setValue('review')
    await flushPromises()
    expect(paths()).toEqual([])
    expect(keeps()).toBe(0)
    // Turn 1, then the whole session again, before either answers; the answers come in the other order.
    await panel.get('[data-testid=changes-scope]').setValue('1')
    await panel.get('[data-testid=changes-scope]').setValue('review')
    await flushPromises()
    expect(asked.map((a) => a.from)).toEqual([undefined, 2, undefined, 1, undefined])
    asked[4].answer(answerFor('review', 'cart.txt', 'README.md'))
    await flushPromises()
    asked[3].answer(answerFor(1, 'NOTES.md'))
    asked[2].answer(answerFor('review', 'stale.txt'))
    await flushPromises()
    expect(paths()).toEqual(['cart.txt', 'README.md'])
    expect(keeps()).toBe(2)
    panel.unmount()
  })

  it('keeps a rewind the user asks for while the last one is still being read back', async () => {
    new FakeHost({
      'changes.list': ({ from }: { from?: number }) => new Promise<ChangesResult>((resolve) => asked.push({ from, answer: resolve })),
      'changes.rewind': () => ({ files: ['README.md'], undo: { index: 3 } })
    }).install()
    // As the conversation asks it (SessionView): a rewind to checkpoint 1, its request dropped once told it is done.
    const rewound = (): void => void panel.setProps({ rewindTo: null })
    const panel = mount(ChangesPanel, { props: { session, rewindTo: 1, onRewound: rewound }, attachTo: document.body })
    await flushPromises()
    asked[0].answer(answerFor('review', 'README.md'))
    await flushPromises()
    await panel.get('[data-testid=rewind-go]').trigger('click')
    await flushPromises()
    // Rewound; the files are read again, and that answer is slow to come: meanwhile the user asks for another rewind.
    expect(panel.find('[data-testid=rewind-confirm]').exists()).toBe(false)
    await panel.get('[data-testid=checkpoint-rewind]').trigger('click')
    await flushPromises()
    expect(panel.find('[data-testid=rewind-confirm]').exists()).toBe(true)
    asked[1].answer(answerFor('review', 'README.md'))
    await flushPromises()
    // Still there, for the user to confirm: the first rewind's end took nothing away.
    expect(panel.find('[data-testid=rewind-confirm]').exists()).toBe(true)
    expect(panel.emitted('rewound')).toHaveLength(1)
    panel.unmount()
  })
})
