import { onBeforeUnmount, onMounted, ref, type Ref } from 'vue'
import { lazily } from './intl'

const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60]
]
const format = lazily(() => new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }))
const absolute = lazily(() => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }))

/**
 * Makes the formatters a pointer over a session's row uses (its tooltip's date and age): the first Intl formatter a
 * page makes costs Chromium its locale data, 38 ms in a 12-entry conversation's open profiled here (the pointer that
 * clicks it is over it first). Called when the window is first idle after its start (open-window.ts).
 */
export function warmTimeFormats(): void {
  absolute()
  format()
}

/** "5 minutes ago", "yesterday", "just now". */
export function relativeTime(iso: string, now = Date.now()): string {
  const time = new Date(iso).getTime()
  if (Number.isNaN(time)) return ''
  const seconds = Math.round((time - now) / 1000)
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return format().format(Math.round(seconds / size), unit)
  }
  return 'just now'
}

/** "12 Mar 2025, 14:05", for tooltips. */
export function absoluteTime(iso: string): string {
  const time = new Date(iso)
  return Number.isNaN(time.getTime()) ? '' : absolute().format(time)
}

/**
 * The current time, refreshed every half minute while the component is mounted: relative times stay true. Not
 * before it is mounted: a component the Host draws (first-screen.ts) is never mounted, nor unmounted, and would
 * leave its clock running in the Host for good.
 */
export function useNow(): Ref<number> {
  const now = ref(Date.now())
  let timer: ReturnType<typeof setInterval> | undefined
  onMounted(() => (timer = setInterval(() => (now.value = Date.now()), 30_000)))
  onBeforeUnmount(() => clearInterval(timer))
  return now
}

/**
 * Month names in the window's language (English, as every word of it), for
 * the compact dates of lists. Not an Intl.DateTimeFormat: the first one a page
 * makes costs Chromium 55–80 ms here (its locale data), which a sidebar
 * holding a session older than a week would pay before its first paint. The
 * full date in the user's locale is in the tooltip, made on hover.
 */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** "now", "5m", "3h", "2d", then "Mar 12" ("Mar 12, 2025" in another year): for narrow lists (the absolute time goes in a tooltip). */
export function compactTime(iso: string, now = Date.now()): string {
  const time = new Date(iso).getTime()
  if (Number.isNaN(time)) return ''
  const seconds = Math.max(0, Math.round((now - time) / 1000))
  if (seconds < 60) return 'now'
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`
  if (seconds < 24 * 3600) return `${Math.floor(seconds / 3600)}h`
  if (seconds < 7 * 24 * 3600) return `${Math.floor(seconds / (24 * 3600))}d`
  const date = new Date(time)
  const day = `${MONTHS[date.getMonth()]} ${date.getDate()}`
  return date.getFullYear() === new Date(now).getFullYear() ? day : `${day}, ${date.getFullYear()}`
}
