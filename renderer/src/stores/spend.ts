import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import type { SpendGrouping, SpendReport } from '../../../shared/spend'
import { host, messageOf } from '../host/client'

export type SpendPeriod = 'today' | '7d' | '30d' | 'all' | 'custom'

/**
 * The Spend page's state: the period chosen (kept while the window lives), the
 * grouping of its table, the chart's measure, and the Host's report for them.
 * The report is asked again when the Host says what was spent changed
 * (`spend.changed`), while the page is open.
 */
export const useSpendStore = defineStore('spend', () => {
  const period = ref<SpendPeriod>('7d')
  /** The custom period's first and last days (yyyy-mm-dd, local, both included). */
  const custom = ref({ from: '', to: '' })
  const grouping = ref<SpendGrouping>('sessions')
  /** What the chart shows: a currency's cost, or 'tokens'; '' until chosen (the first currency, else tokens). */
  const measure = ref('')
  const report = shallowRef<SpendReport | null>(null)
  const loading = ref(false)
  const error = ref('')
  const pageOpen = ref(false)
  let asked = 0
  let again: ReturnType<typeof setTimeout> | null = null

  /** Asks for the report of the period chosen; an answer to an older question is dropped. */
  async function load(): Promise<void> {
    const range = rangeOf(period.value, custom.value)
    if ('problem' in range) {
      error.value = range.problem
      return
    }
    const mine = ++asked
    loading.value = true
    try {
      const result = await host().request('spend.report', { ...range, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone })
      if (mine !== asked) return
      report.value = result
      error.value = ''
    } catch (e) {
      if (mine === asked) error.value = messageOf(e)
    } finally {
      if (mine === asked) loading.value = false
    }
  }

  function open(visible: boolean): void {
    pageOpen.value = visible
    if (visible) void load()
  }

  /** What was spent changed: asked again soon (a turn's cost and tokens come one after the other). */
  function receiveChanged(): void {
    if (!pageOpen.value || again) return
    again = setTimeout(() => {
      again = null
      void load()
    }, 250)
  }

  return { period, custom, grouping, measure, report, loading, error, pageOpen, load, open, receiveChanged }
})

/** The instants a period runs between, in this window's time zone: from a local midnight to the midnight after its last day. */
export function rangeOf(
  period: SpendPeriod,
  custom: { from: string; to: string },
  now = new Date()
): { from?: string; to?: string } | { problem: string } {
  const midnight = (days: number): string => new Date(now.getFullYear(), now.getMonth(), now.getDate() + days).toISOString()
  switch (period) {
    case 'today':
      return { from: midnight(0), to: midnight(1) }
    case '7d':
      return { from: midnight(-6), to: midnight(1) }
    case '30d':
      return { from: midnight(-29), to: midnight(1) }
    case 'all':
      return {}
    case 'custom': {
      const day = (text: string, after: number): string | null => {
        const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
        return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + after).toISOString() : null
      }
      const from = day(custom.from, 0)
      const to = day(custom.to, 1)
      if (!from || !to) return { problem: 'Choose the first and the last day of the period.' }
      if (from >= to) return { problem: 'The first day must not come after the last.' }
      return { from, to }
    }
  }
}
