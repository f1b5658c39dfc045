import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { CommandChange } from '../../../shared/confirmation'
import type { AskForCode } from '../host/client'

/**
 * The code a change that would run a program waits for under `npm run serve`:
 * the Host printed it on serve's console (never to the page), and the window
 * asks the user to type it (`CodeDialog.vue`). One question at a time; others
 * wait their turn.
 */

export interface CodeQuestion {
  confirmation: CommandChange
  /** Why the last code typed was refused (wrong, used, expired). */
  refusal?: string
  /** A new code was just printed (the user asked for one). */
  fresh?: boolean
}

type Answer = Awaited<ReturnType<AskForCode>>

export const useConfirmCodeStore = defineStore('confirm-code', () => {
  const question = ref<CodeQuestion | null>(null)
  let answer: ((value: Answer) => void) | null = null
  let turn: Promise<unknown> = Promise.resolve()

  /** Shows the question and resolves with the user's answer (for HostClient.onConfirmationCode). */
  const ask: AskForCode = (next) => {
    const asked = turn.then(
      () =>
        new Promise<Answer>((resolve) => {
          question.value = next
          answer = resolve
        })
    )
    turn = asked.catch(() => undefined)
    return asked
  }

  function reply(value: Answer): void {
    const resolve = answer
    answer = null
    question.value = null
    resolve?.(value)
  }

  return {
    question,
    ask,
    /** The code the user typed. */
    submit: (code: string) => reply({ code }),
    /** Asks serve for a new code. */
    again: () => reply('again'),
    cancel: () => reply(null)
  }
})
