import { promises as fs } from 'node:fs'
import { dirname } from 'node:path'

/**
 * The window's size and place, remembered between runs: parsed from a JSON file
 * in userData, and put back on a display that is still there (a monitor may
 * have been unplugged, or the resolution changed). No Electron import: main.ts
 * passes in the displays' work areas from `screen`.
 */

export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

export interface WindowState {
  bounds: Rect
  maximized: boolean
  fullScreen: boolean
}

export interface WindowDefaults {
  width: number
  height: number
  minWidth: number
  minHeight: number
}

/** How much of the window's top strip (its title bar) must be on a display to be reachable. */
const MIN_VISIBLE = 64
const TITLE_BAR = 32

/** A saved state, or null when the text is not one (then the defaults apply). */
export function parseWindowState(text: string): WindowState | null {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  const v = value as Partial<WindowState> | null
  const b = v?.bounds as Partial<Rect> | undefined
  const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n)
  if (!b || !finite(b.x) || !finite(b.y) || !finite(b.width) || !finite(b.height) || b.width <= 0 || b.height <= 0) return null
  return {
    bounds: { x: Math.round(b.x), y: Math.round(b.y), width: Math.round(b.width), height: Math.round(b.height) },
    maximized: v?.maximized === true,
    fullScreen: v?.fullScreen === true
  }
}

/**
 * Where to open the window: the saved bounds when their title bar is on a
 * display (shrunk to fit it, and moved inside it), else the default size centred
 * on the primary display. `workAreas[0]` is the primary display's.
 */
export function restoreBounds(saved: WindowState | null, workAreas: Rect[], defaults: WindowDefaults): Rect {
  const primary = workAreas[0] ?? { x: 0, y: 0, width: defaults.width, height: defaults.height }
  if (saved) {
    const titleBar = { ...saved.bounds, height: Math.min(TITLE_BAR, saved.bounds.height) }
    const best = workAreas.map((area) => ({ area, overlap: overlapArea(titleBar, area) })).sort((a, b) => b.overlap - a.overlap)[0]
    const visibleWidth = best ? overlapWidth(titleBar, best.area) : 0
    if (best && best.overlap > 0 && visibleWidth >= Math.min(MIN_VISIBLE, saved.bounds.width)) {
      return fitInside(saved.bounds, best.area, defaults)
    }
  }
  const width = Math.min(defaults.width, primary.width)
  const height = Math.min(defaults.height, primary.height)
  return {
    x: primary.x + Math.round((primary.width - width) / 2),
    y: primary.y + Math.round((primary.height - height) / 2),
    width,
    height
  }
}

/** Shrinks the rect to the area (not below the minimum size) and moves it inside. */
function fitInside(rect: Rect, area: Rect, defaults: WindowDefaults): Rect {
  const width = Math.max(Math.min(rect.width, area.width), Math.min(defaults.minWidth, area.width))
  const height = Math.max(Math.min(rect.height, area.height), Math.min(defaults.minHeight, area.height))
  const x = Math.min(Math.max(rect.x, area.x), area.x + area.width - width)
  const y = Math.min(Math.max(rect.y, area.y), area.y + area.height - height)
  return { x, y, width, height }
}

function overlapWidth(a: Rect, b: Rect): number {
  return Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x))
}

function overlapHeight(a: Rect, b: Rect): number {
  return Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y))
}

function overlapArea(a: Rect, b: Rect): number {
  return overlapWidth(a, b) * overlapHeight(a, b)
}

export async function loadWindowState(file: string): Promise<WindowState | null> {
  try {
    return parseWindowState(await fs.readFile(file, 'utf8'))
  } catch {
    return null
  }
}

/** Written to a temporary file and renamed, so a crash never leaves half a file. */
export async function saveWindowState(file: string, state: WindowState): Promise<void> {
  await fs.mkdir(dirname(file), { recursive: true, mode: 0o700 })
  const temporary = `${file}.${process.pid}.tmp`
  // In the data folder, which is the user's alone (host/storage/private-files.ts).
  await fs.writeFile(temporary, JSON.stringify(state, null, 2), { mode: 0o600 })
  await fs.rename(temporary, file)
}

/** Calls `run` once things have been quiet for `ms`; `flush` runs a pending call at once. */
export function debounce(run: () => void, ms: number): { schedule: () => void; flush: () => void; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | null = null
  return {
    schedule() {
      if (timer) clearTimeout(timer)
      timer = setTimeout(() => {
        timer = null
        run()
      }, ms)
    },
    flush() {
      if (!timer) return
      clearTimeout(timer)
      timer = null
      run()
    },
    cancel() {
      if (timer) clearTimeout(timer)
      timer = null
    }
  }
}
