import { join } from 'node:path'
import { writeFile } from 'node:fs/promises'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { debounce, loadWindowState, parseWindowState, restoreBounds, saveWindowState, type WindowState } from '../../electron/window-state'
import { removeDir, tempDir } from '../helpers'

const defaults = { width: 1280, height: 820, minWidth: 720, minHeight: 480 }
const laptop = { x: 0, y: 0, width: 1440, height: 875 }
const monitorOnTheRight = { x: 1440, y: 0, width: 2560, height: 1415 }

function state(x: number, y: number, width: number, height: number, maximized = false): WindowState {
  return { bounds: { x, y, width, height }, maximized, fullScreen: false }
}

describe('the window’s place', () => {
  it('opens where it was when that place is on a display', () => {
    expect(restoreBounds(state(100, 50, 1000, 700), [laptop], defaults)).toEqual({ x: 100, y: 50, width: 1000, height: 700 })
    expect(restoreBounds(state(2000, 100, 1600, 1000), [laptop, monitorOnTheRight], defaults)).toEqual({ x: 2000, y: 100, width: 1600, height: 1000 })
  })

  it('comes back to the primary display when its monitor is gone', () => {
    expect(restoreBounds(state(2000, 100, 1600, 1000), [laptop], defaults)).toEqual({ x: 80, y: 28, width: 1280, height: 820 })
  })

  it('moves a window whose title bar is off screen, and shrinks one larger than the display', () => {
    // Title bar just above the top edge, still overlapping horizontally: moved down into the work area.
    expect(restoreBounds(state(200, -10, 800, 600), [laptop], defaults)).toEqual({ x: 200, y: 0, width: 800, height: 600 })
    // Saved on a bigger screen: fits the laptop now.
    expect(restoreBounds(state(0, 0, 2400, 1300), [laptop], defaults)).toEqual({ x: 0, y: 0, width: 1440, height: 875 })
    // Only a sliver of the title bar is visible at the right edge: not reachable, so centred instead.
    expect(restoreBounds(state(1420, 100, 800, 600), [laptop], defaults)).toEqual({ x: 80, y: 28, width: 1280, height: 820 })
  })

  it('uses the defaults when nothing was saved, or the file is not a saved state', () => {
    expect(restoreBounds(null, [laptop], defaults)).toEqual({ x: 80, y: 28, width: 1280, height: 820 })
    expect(parseWindowState('not json')).toBeNull()
    expect(parseWindowState('{"bounds":{"x":0,"y":0,"width":-5,"height":10}}')).toBeNull()
    expect(parseWindowState('{"bounds":{"x":"0","y":0,"width":5,"height":10}}')).toBeNull()
    expect(parseWindowState('{"bounds":{"x":1.4,"y":2,"width":800,"height":600},"maximized":true}')).toEqual(state(1, 2, 800, 600, true))
  })

  describe('on disk', () => {
    let dir: string
    beforeEach(async () => {
      dir = await tempDir('window-state')
    })
    afterEach(() => removeDir(dir))

    it('is saved and read back; a damaged file reads as nothing saved', async () => {
      const file = join(dir, 'nested', 'window-state.json')
      expect(await loadWindowState(file)).toBeNull()
      await saveWindowState(file, state(10, 20, 900, 700, true))
      expect(await loadWindowState(file)).toEqual(state(10, 20, 900, 700, true))
      await writeFile(file, '{"bounds":')
      expect(await loadWindowState(file)).toBeNull()
    })
  })

  it('is saved once moving and resizing have settled, and at once when the window closes', () => {
    vi.useFakeTimers()
    try {
      let saves = 0
      const save = debounce(() => saves++, 400)
      save.schedule()
      vi.advanceTimersByTime(300)
      save.schedule()
      vi.advanceTimersByTime(300)
      expect(saves).toBe(0)
      vi.advanceTimersByTime(100)
      expect(saves).toBe(1)
      save.schedule()
      save.flush()
      expect(saves).toBe(2)
      save.flush()
      expect(saves).toBe(2)
    } finally {
      vi.useRealTimers()
    }
  })
})
