import { defineStore } from 'pinia'
import { host, HostRequestError, messageOf } from '../host/client'
import { useProjectsStore } from './projects'
import { useSessionsStore } from './sessions'
import { useUiStore } from './ui'

/**
 * "Edit and resend" from an earlier message (`sessions.editResend`): the
 * files go back to that turn's checkpoint and a new session continues from
 * before the message with the edited text; and the links between such a
 * branch and its original.
 */

/** Why a resend did not happen: the Host's words, and whether the files could not go back (a conversation-only resend is offered). */
export interface ResendRefusal {
  message: string
  checkpointMissing: boolean
}

export const useEditsStore = defineStore('edits', () => {
  const projects = useProjectsStore()
  const sessions = useSessionsStore()

  /** Resends message `seq` of `id` edited; the new session opens in the pane. Null when done, else why not. */
  async function resend(id: string, seq: number, text: string, conversationOnly: boolean): Promise<ResendRefusal | null> {
    try {
      const { session, rewound } = await host().request('sessions.editResend', { id, seq, text, conversationOnly })
      projects.upsertSession(session)
      await sessions.open(session.id)
      if (rewound) {
        const files = rewound.files.length === 1 ? '1 file' : `${rewound.files.length} files`
        useUiStore().toast(
          `${files} went back to how they were before that message; checkpoint ${rewound.undo} of the original holds them as they were.`
        )
      }
      return null
    } catch (error) {
      return { message: messageOf(error), checkpointMissing: error instanceof HostRequestError && error.code === 'checkpoint_missing' }
    }
  }

  /** Opens the other side of a branch (the original, or an edited copy), when it is still there. */
  async function openBranch(id: string): Promise<void> {
    const found = await projects.ensureSession(id).catch(() => undefined)
    if (found) await sessions.open(id)
    else useUiStore().toast('That conversation is no longer in Switchboard.')
  }

  return { resend, openBranch }
})
