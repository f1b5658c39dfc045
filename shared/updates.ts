import { z } from 'zod'

/**
 * Updates that install themselves (desktop only). The Electron shell's main
 * process finds and downloads them (electron/updates.ts, electron-updater with
 * a generic feed: the `updateFeed` setting); it tells the Host what it is
 * doing, the Host tells every window (`updates.changed`), and a window's
 * "Restart to update" comes back through the Host, which knows whether an
 * agent is mid-turn and asks first. No update is installed without the user's yes.
 */

export type UpdateState =
  /** No updates here: `npm run serve`, a development build, or no feed set. */
  | { status: 'off'; reason: 'development' | 'no-feed' | 'serve' }
  /** Looked, and this is the latest (a feed that could not be reached is said in the log only). */
  | { status: 'idle'; checkedAt?: string }
  | { status: 'checking' }
  | { status: 'downloading'; version: string; transferred: number; total: number }
  /** Downloaded and checked (sha512; on Windows the publisher's signature): installs on the user's yes. */
  | { status: 'ready'; version: string; installOnQuit: boolean }
  /** The download was refused or failed: what happened, and that nothing was installed. */
  | { status: 'failed'; version?: string; message: string }

export const updatesRequestParams = {
  /** What the updater is doing. */
  'updates.get': z.object({}),
  /**
   * The user's yes to a downloaded update: `restart` now (after asking, outside the window, when an agent is
   * mid-turn), or `quit`: installed when Switchboard next quits.
   */
  'updates.install': z.object({ when: z.enum(['restart', 'quit']) })
} as const

export interface UpdatesRequestResults {
  'updates.get': UpdateState
  /** `restarting`: the app is quitting to install; else the update waits for the next quit. */
  'updates.install': { restarting: boolean }
}
