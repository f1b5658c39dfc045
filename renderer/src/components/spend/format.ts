import type { SpendUnit } from '../../../../shared/spend'

/** How the Spend page writes amounts, tokens and the chart's buckets. */

const moneyFormats = new Map<string, Intl.NumberFormat | null>()

/** "$1.25", "€0.0042" (small amounts keep four places), or "12.5 credits" for a unit that is not a currency code. */
export function money(amount: number, currency: string): string {
  const places = amount !== 0 && Math.abs(amount) < 1 ? 4 : 2
  const key = `${currency}:${places}`
  if (!moneyFormats.has(key)) {
    let format: Intl.NumberFormat | null = null
    if (/^[A-Z]{3}$/.test(currency)) {
      try {
        format = new Intl.NumberFormat(undefined, { style: 'currency', currency, minimumFractionDigits: 2, maximumFractionDigits: places })
      } catch {
        format = null
      }
    }
    moneyFormats.set(key, format)
  }
  const format = moneyFormats.get(key)
  return format ? format.format(amount) : `${amount.toLocaleString(undefined, { maximumFractionDigits: places })} ${currency}`
}

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 })
const whole = new Intl.NumberFormat()

/** "1.8K" on a card or an axis; "1,842" in the table. */
export function tokens(count: number, short = false): string {
  return short ? compact.format(count) : whole.format(count)
}

const hourLabel = new Intl.DateTimeFormat(undefined, { hour: 'numeric' })
const dayLabel = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short' })
const monthLabel = new Intl.DateTimeFormat(undefined, { month: 'short', year: 'numeric' })
const longDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/** A bucket key from the Host (2025-06-01T14, 2025-06-01, 2025-06) as the chart writes it, in this window's time. */
export function bucketLabel(key: string, unit: SpendUnit, long = false): string {
  const [y, m, d, h] = key.split(/[-T]/).map(Number)
  if (unit === 'month') return monthLabel.format(new Date(y, m - 1, 1))
  const day = new Date(y, m - 1, d, h || 0)
  if (unit === 'day') return long ? longDay.format(day) : dayLabel.format(day)
  return long ? `${longDay.format(day)}, ${hourLabel.format(day)}` : hourLabel.format(day)
}

/** A local day as yyyy-mm-dd (what date inputs and file names use). */
export function isoDay(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}
