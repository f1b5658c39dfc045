import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { SessionRecord } from '../../shared/domain'
import { EventBus } from '../../electron/host/contract/events'
import { AtomicTextFile } from '../../electron/host/storage/atomic-file'
import { Records } from '../../electron/host/storage/records'
import { DB_VERSION, Store, type DbData } from '../../electron/host/storage/store'
import { openHost, removeDir, tempDir } from '../helpers'

/**
 * db.json at the Host's close: written when anything changed since it was last
 * written (a change noted without a save included), never again when nothing
 * did (at 100,000 sessions the close's save read the older records and wrote
 * 30 MB, 0.3–1 s of every quit), and a write under way is waited for.
 */

let dataDir: string
const dbFile = (): string => join(dataDir, 'db.json')
beforeEach(async () => (dataDir = await tempDir('store-close')))
afterEach(async () => {
  vi.restoreAllMocks()
  await removeDir(dataDir)
})

const SESSIONS = 200
const at = (minute: number): string => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString()
const session = (i: number): SessionRecord => ({
  id: `s${i}`,
  acpSessionId: `acp-${i}`,
  agentId: 'a',
  projectId: 'p',
  cwd: '/home/me/p',
  title: `Session ${i}`,
  titleSource: 'prompt',
  createdAt: at(i),
  updatedAt: at(i)
})
const data = (): DbData => ({
  version: DB_VERSION,
  projects: [{ id: 'p', name: 'p', cwd: '/home/me/p', createdAt: at(0) }],
  agents: [{ id: 'a', name: 'A', transport: { kind: 'process', command: 'a', args: [], env: {} } }],
  sessions: Array.from({ length: SESSIONS }, (_, i) => session(i)),
  permissionRules: [],
  mcpProfiles: [],
  mcpDisabled: {}
})

/** A db.json as a Host writes it (its first part first, the older records after). */
async function writtenByAHost(): Promise<void> {
  const { store } = await Store.open(dataDir, [])
  Object.assign(store.data, data())
  await store.save()
}

async function onDisk(): Promise<DbData> {
  return JSON.parse(await readFile(dbFile(), 'utf8')) as DbData
}

/** The file's identity: a write (a new file renamed over it) changes its inode. */
async function identity(): Promise<string> {
  const s = await stat(dbFile())
  return `${s.ino}:${s.mtimeMs}:${s.size}`
}

type WriteNow = { writeNow: (text: unknown) => Promise<void> }
const writes = (): ReturnType<typeof vi.spyOn> => vi.spyOn(AtomicTextFile.prototype as unknown as WriteNow, 'writeNow')

describe("db.json at the Host's close", () => {
  it('a Host started and quit with nothing done leaves db.json as it was, not written again', async () => {
    await writtenByAHost()
    const before = await identity()
    for (let start = 0; start < 2; start++) {
      const host = await openHost(dataDir)
      await host.close()
    }
    expect(await identity()).toBe(before)
    expect((await onDisk()).sessions).toHaveLength(SESSIONS)

    // The same close with the older records read (as a search or the sidebar's scroll asks) writes nothing either.
    const { store } = await Store.open(dataDir, [])
    await store.whole()
    const written = writes()
    await store.saveIfChanged()
    expect(written).not.toHaveBeenCalled()
    expect(await identity()).toBe(before)
  })

  it('keeps at the close a change noted without a save (a turn under way), with every record', async () => {
    await writtenByAHost()
    const { store } = await Store.open(dataDir, [])
    expect(store.isWhole).toBe(false)
    const records = new Records(store, new EventBus())
    expect(records.noteSession('s199', { underWay: 'prompt' })).toBe(true)
    await store.saveIfChanged()
    const saved = await onDisk()
    expect(saved.sessions).toHaveLength(SESSIONS)
    expect(saved.sessions.find((s) => s.id === 's199')?.underWay).toBe('prompt')
  })

  it('writes a db.json that is not laid out as a Host writes it (by hand, an older Switchboard) again at the close, laid out', async () => {
    await writeFile(dbFile(), JSON.stringify(data()))
    const { store } = await Store.open(dataDir, [])
    await store.saveIfChanged()
    const text = await readFile(dbFile(), 'utf8')
    expect(text.split('\n')[0]).toMatch(/"sessions":\[$/)
    expect((JSON.parse(text) as DbData).sessions).toHaveLength(SESSIONS)
    // And a folder with none gets one at its first close.
    await removeDir(dataDir)
    const fresh = await Store.open(dataDir, [])
    await fresh.store.saveIfChanged()
    expect((await onDisk()).agents).toEqual([])
  })

  it('tries again at the close a save that failed, and waits for a write still under way', async () => {
    await writtenByAHost()
    const { store } = await Store.open(dataDir, [])
    const records = new Records(store, new EventBus())
    const writeNow = (AtomicTextFile.prototype as unknown as WriteNow).writeNow
    let fail = true
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    let writing = false
    vi.spyOn(AtomicTextFile.prototype as unknown as WriteNow, 'writeNow').mockImplementation(async function (this: WriteNow, text) {
      if (fail) {
        fail = false
        throw new Error('ENOSPC: no space left on device')
      }
      writing = true
      await held
      return writeNow.call(this, text)
    })
    await expect(records.updateSession('s199', { title: 'Renamed' })).rejects.toThrow('ENOSPC')
    const closed = store.saveIfChanged()
    await expect.poll(() => writing, { message: 'the close wrote nothing' }).toBe(true)
    let done = false
    void closed.then(() => (done = true))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(done).toBe(false)
    release()
    await closed
    expect((await onDisk()).sessions.find((s) => s.id === 's199')?.title).toBe('Renamed')

    // A save's write under way when the close comes, nothing changed since: the close waits for it.
    let releaseSecond: () => void = () => undefined
    const secondHeld = new Promise<void>((resolve) => (releaseSecond = resolve))
    let writingAgain = false
    vi.restoreAllMocks()
    vi.spyOn(AtomicTextFile.prototype as unknown as WriteNow, 'writeNow').mockImplementation(async function (this: WriteNow, text) {
      writingAgain = true
      await secondHeld
      return writeNow.call(this, text)
    })
    const saving = records.updateSession('s198', { title: 'Also renamed' })
    await expect.poll(() => writingAgain).toBe(true)
    let closedToo = false
    const close = store.saveIfChanged().then(() => (closedToo = true))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(closedToo).toBe(false)
    releaseSecond()
    await Promise.all([saving, close])
    expect((await onDisk()).sessions.find((s) => s.id === 's198')?.title).toBe('Also renamed')
  })
})
