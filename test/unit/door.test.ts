import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DOOR_FILE, findDoor, openDoor } from '../../electron/host/web/door'

/**
 * The door the `switchboard` command finds a running Host by (electron/host/web/door.ts): its token drives the Host
 * as a window would, so a door another user of the machine could read, or one that is not a door, is never used.
 */
describe('the Host door', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-door-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  const token = 'a-token-of-twenty-four-ch'

  it.skipIf(process.platform === 'win32')(
    'is written for the owner alone, found while its process lives, and refused once others can read it',
    async () => {
      const door = await openDoor(dir, { port: 4321, token })
      expect(await findDoor(dir)).toEqual({ pid: process.pid, port: 4321, token })
      await chmod(join(dir, DOOR_FILE), 0o644)
      await expect(findDoor(dir)).rejects.toThrow(/can be read by other users of this machine, so its token is not used/)
      await door.close()
      expect(await findDoor(dir)).toBeNull()
    }
  )

  it('is no door when its process is gone, and a file that is not a door is said to be one to remove', async () => {
    await writeFile(join(dir, DOOR_FILE), JSON.stringify({ pid: 2 ** 22 + 12345, port: 4321, token }), { mode: 0o600 })
    expect(await findDoor(dir)).toBeNull()
    await writeFile(join(dir, DOOR_FILE), 'not json', { mode: 0o600 })
    await expect(findDoor(dir)).rejects.toThrow(/is not a Switchboard door file \(not JSON\); if no Switchboard runs on this data folder, remove it/)
    await writeFile(join(dir, DOOR_FILE), JSON.stringify({ pid: process.pid, port: 4321, token: 'short' }), { mode: 0o600 })
    await expect(findDoor(dir)).rejects.toThrow(/is not a Switchboard door file;/)
  })
})
