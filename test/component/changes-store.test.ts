// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import type { SessionRecord } from '../../shared/domain'
import type { ChangesResult, FileChange, MergeResult } from '../../shared/workspace'
import ChangesPanel from '../../renderer/src/components/changes/ChangesPanel.vue'
import { useChangesStore } from '../../renderer/src/stores/changes'
import { FakeHost } from './fake-host'

/**
 * The changes store asks the Host what a session changed and does what the
 * Changes view asks (keep, revert, commit, merge, remove the worktree): what
 * the Host refuses shows in the view in its words, where the view always
 * showed it, and the files are read again after each change.
 */

const worktree = { path: '/work/shop-wt', branch: 'sb/cart', baseBranch: 'main', repo: '/work/shop' }
const session: SessionRecord = {
  id: 's1',
  acpSessionId: null,
  agentId: 'a1',
  projectId: 'p1',
  cwd: worktree.path,
  title: 'Cart',
  titleSource: 'user',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  worktree
}
const file = (path: string): FileChange => ({ path, status: 'modified', binary: false, tooLarge: false, oldText: 'a\n', newText: 'b\n' })
const answer = (...paths: string[]): ChangesResult => ({
  available: true,
  kind: 'git',
  checkpoints: [],
  from: 'review',
  to: 'present',
  files: paths.map(file),
  truncated: false,
  worktree: { ...worktree, uncommitted: paths, gitHooks: false }
})

let fake: FakeHost
/** What `changes.list` answers next: the files, or a refusal. */
let listed: ChangesResult | Error

beforeEach(() => {
  setActivePinia(createPinia())
  document.body.innerHTML = ''
  listed = answer('cart.txt', 'NOTES.md')
  fake = new FakeHost({
    'changes.list': () => {
      if (listed instanceof Error) throw listed
      return listed
    }
  }).install()
})

function open() {
  return mount(ChangesPanel, { props: { session, rewindTo: null }, attachTo: document.body })
}

const shownError = (panel: ReturnType<typeof open>): string | null => {
  const error = panel.find('[data-testid=changes-error]')
  return error.exists() ? error.text() : null
}
const paths = (panel: ReturnType<typeof open>): string[] => panel.findAll('[data-testid=change-path]').map((p) => p.text())

describe('the changes store', () => {
  it('shows a read the Host refused in its words, and the next read that answers takes the message away', async () => {
    listed = new Error('Cannot read the changes of /work/shop-wt: git exited with code 128 (not a git repository)')
    const panel = open()
    await flushPromises()
    expect(shownError(panel)).toBe('Cannot read the changes of /work/shop-wt: git exited with code 128 (not a git repository)')
    expect(panel.get('[data-testid=changes-error]').attributes('role')).toBe('alert')
    expect(panel.get('[data-testid=changes-refresh]').text()).toBe('Refresh')
    expect(useChangesStore().views.s1).toMatchObject({ loading: false, busy: false, result: null })

    listed = answer('cart.txt')
    await panel.get('[data-testid=changes-refresh]').trigger('click')
    await flushPromises()
    expect(shownError(panel)).toBeNull()
    expect(paths(panel)).toEqual(['cart.txt'])
    panel.unmount()
  })

  it('says why the Host refused a keep, after the files are read again, and keeps the buttons usable', async () => {
    fake.answer('changes.keep', ({ path }: { path: string }) => {
      throw new Error(`${path} changed on disk since it was shown: read the changes again and keep what is there`)
    })
    const panel = open()
    await flushPromises()
    const reads = fake.sent('changes.list').length
    listed = answer('cart.txt', 'NOTES.md', 'README.md')
    await panel.findAll('[data-testid=file-keep]')[0].trigger('click')
    await flushPromises()
    expect(fake.sent('changes.keep')).toEqual([{ id: 's1', path: 'cart.txt', hunk: undefined }])
    expect(fake.sent('changes.list').length).toBe(reads + 1)
    expect(paths(panel)).toEqual(['cart.txt', 'NOTES.md', 'README.md'])
    expect(shownError(panel)).toBe('cart.txt changed on disk since it was shown: read the changes again and keep what is there')
    expect(panel.findAll('[data-testid=file-keep]').every((b) => b.attributes('disabled') === undefined)).toBe(true)

    // The next change that goes through takes the message away.
    fake.answer('changes.keep', () => ({}))
    await panel.findAll('[data-testid=file-keep]')[0].trigger('click')
    await flushPromises()
    expect(shownError(panel)).toBeNull()
    panel.unmount()
  })

  it('keeps the commit message when the commit is refused, and says why', async () => {
    fake.answer('changes.commit', () => {
      throw new Error('git commit failed: Author identity unknown (set user.name and user.email)')
    })
    const panel = open()
    await flushPromises()
    await panel.get('[data-testid=commit-message]').setValue('Cart totals')
    await panel.get('form.commit').trigger('submit')
    await flushPromises()
    expect(shownError(panel)).toBe('git commit failed: Author identity unknown (set user.name and user.email)')
    expect((panel.get('[data-testid=commit-message]').element as HTMLInputElement).value).toBe('Cart totals')
    panel.unmount()
  })

  it('offers to remove the worktree after a merge; refused, the offer stays with the reason', async () => {
    const merged: MergeResult = { merged: true, into: 'main', conflicts: [], message: 'Merged sb/cart into main.' }
    fake.answer('changes.merge', () => merged)
    fake.answer('changes.removeWorktree', () => {
      throw new Error('The worktree has uncommitted changes (stray.txt): commit or discard them first')
    })
    const panel = open()
    await flushPromises()
    await panel.get('[data-testid=merge]').trigger('click')
    await flushPromises()
    expect(panel.get('[data-testid=merge-result]').text()).toContain('Merged sb/cart into main.')
    expect(document.activeElement).toBe(panel.get('[data-testid=remove-worktree]').element)

    await panel.get('[data-testid=remove-worktree]').trigger('click')
    await flushPromises()
    expect(panel.get('[data-testid=remove-worktree-error]').text()).toBe(
      'The worktree has uncommitted changes (stray.txt): commit or discard them first'
    )
    expect(panel.get('[data-testid=remove-worktree]').attributes('disabled')).toBeUndefined()
    // Not the view's own error: that one is about reading and changing files.
    expect(shownError(panel)).toBeNull()
    panel.unmount()
  })

  it('forgets a closed view: opened again, it shows nothing of what the last one said', async () => {
    listed = new Error('Cannot read the changes: the folder is gone')
    const first = open()
    await flushPromises()
    expect(shownError(first)).toBe('Cannot read the changes: the folder is gone')
    first.unmount()
    expect(useChangesStore().views.s1).toBeUndefined()

    listed = answer('cart.txt')
    const second = open()
    expect(shownError(second)).toBeNull()
    await flushPromises()
    expect(paths(second)).toEqual(['cart.txt'])
    second.unmount()
  })
})
