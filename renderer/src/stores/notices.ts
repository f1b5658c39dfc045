import { defineStore } from 'pinia'
import { ref } from 'vue'
import { messageOf } from '../host/client'

/**
 * What the user must be told: the error banner's messages. A leaf store: it
 * imports no other store, so any store or view may report to it.
 */
export const useNoticesStore = defineStore('notices', () => {
  const errors = ref<string[]>([])

  function report(message: string): void {
    if (!errors.value.includes(message)) errors.value.push(message)
  }

  function dismiss(index: number): void {
    errors.value.splice(index, 1)
  }

  function dismissAll(): void {
    errors.value = []
  }

  /** Takes back the messages that are no longer true (e.g. those about a lost link, once it is back). */
  function withdraw(moot: (message: string) => boolean): void {
    if (errors.value.some(moot)) errors.value = errors.value.filter((message) => !moot(message))
  }

  /** Runs a request whose failure the user must see, without throwing into the view. */
  async function attempt<T>(run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run()
    } catch (error) {
      report(messageOf(error))
      return undefined
    }
  }

  return { errors, report, dismiss, dismissAll, withdraw, attempt }
})
