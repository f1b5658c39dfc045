import { defineStore } from 'pinia'
import type { RequestResult } from '../../../shared/contract'
import { host } from '../host/client'

/**
 * A project's files as the views ask for them: those matching what follows
 * an @ in the composer, and a path clicked in a thread shown in the file
 * manager. Nothing is kept: each answer is for the view that asked. Both
 * throw the Host's message.
 */
export const useFilesStore = defineStore('files', () => {
  /** The project's files matching `query`, best match first, at most `limit`. */
  function list(projectId: string, query: string, limit: number): Promise<RequestResult<'files.list'>> {
    return host().request('files.list', { projectId, query, limit })
  }

  /** Shows a path of the session's project in the system's file manager; `revealed` false where the Host cannot (a browser). */
  function reveal(sessionId: string, path: string): Promise<RequestResult<'files.reveal'>> {
    return host().request('files.reveal', { sessionId, path })
  }

  return { list, reveal }
})
