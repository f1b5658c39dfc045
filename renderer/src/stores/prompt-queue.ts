import { defineStore } from 'pinia'
import type { Attachment } from '../../../shared/contract'
import { host } from '../host/client'
import { useNoticesStore } from './notices'

/**
 * A session's queue of prompts written while a turn runs (`QueuedPrompts.vue`, the composer): the Host keeps it
 * and sends the next when the turn ends; the queue itself arrives in the session's state (`session.state`, the
 * sessions store), in every window alike. A refusal (the prompt was sent meanwhile) goes to the banner.
 */
export const usePromptQueueStore = defineStore('prompt-queue', () => {
  const notices = useNoticesStore()

  /** A prompt written while a turn runs: it waits in the session's queue. Resolves false when the Host refused it. */
  async function enqueue(id: string, text: string, attachments: Attachment[] = []): Promise<boolean> {
    const result = await notices.attempt(() => host().request('sessions.queue', { id, text, attachments }))
    return Boolean(result)
  }

  /** A queued prompt's new text; false (and said) when the Host refused it, e.g. it was sent meanwhile. */
  async function editQueued(id: string, queuedId: string, text: string): Promise<boolean> {
    const result = await notices.attempt(() => host().request('sessions.editQueued', { id, queuedId, text }))
    return Boolean(result)
  }

  async function removeQueued(id: string, queuedId: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.removeQueued', { id, queuedId }))
  }

  async function clearQueue(id: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.clearQueue', { id }))
  }

  async function sendQueuedNow(id: string, queuedId: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.sendQueuedNow', { id, queuedId }))
  }

  /** Sends the queue on again after it was held (a cancelled or failed turn, a restart, holds it). */
  async function resumeQueue(id: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.resumeQueue', { id }))
  }

  return { enqueue, editQueued, removeQueued, clearQueue, sendQueuedNow, resumeQueue }
})
