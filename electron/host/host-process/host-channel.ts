import type { AppCommand } from '../../../shared/app-commands'
import type { CommandChange } from '../../../shared/confirmation'
import type { NavigationTarget } from '../../../shared/navigation'
import type { HostEvent, WireResponse } from '../../../shared/contract'
import type { UpdateState } from '../../../shared/updates'
import type { ConfirmAnswer } from '../contract/confirmations'

/**
 * The small typed channel between the Host's own process and the process
 * that supervises it (host-supervisor.ts): the desktop app's main process
 * (electron/main.ts, the Host in a `utilityProcess`) or `npm run serve`
 * (serve.ts, the Host in a `child_process.fork`). No Electron import.
 *
 * The supervisor opens the Host (`open`), pings it, asks it to close, and
 * hands it the windows' ports (`connect`, desktop only); the Host says when
 * it is open or why it could not open, answers pings, and asks the
 * supervisor for what only the shell can do (`call`: a native dialog, the
 * keychain, revealing a file), answered by `reply`.
 */

/** What the Host is opened with: plain data, no functions (it crosses a process boundary). */
export interface HostOpen {
  type: 'open'
  dataDir: string
  version: string
  loginShell: boolean
  /** Desktop: the shell offers the calls below (dialogs, the keychain); serve: none (codes on its console). */
  shell: 'desktop' | 'serve'
  /** Desktop: whether the keychain encrypts (safeStorage), so secrets persist. */
  secretsPersistent?: boolean
  /** Desktop: the built renderer, served behind the Host's door for the `switchboard` command (web/door.ts). */
  rendererDir?: string
  /** serve: its command line's choices (serving.ts). */
  serve?: { rendererDir: string; port?: number; newToken?: boolean }
}

export type ToHost =
  | HostOpen
  | { type: 'ping'; id: number }
  | { type: 'close' }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; message: string }
  /** A window's port follows the message (desktop): the contract is served on it. */
  | { type: 'connect' }
  /** A menu item's command, emitted on the Host's event bus as `app.command` (the same path as every event). */
  | { type: 'command'; command: AppCommand }
  /** A switchboard:// link the shell was given (electron/links.ts): `app.navigate`, as the command's `open` asks it. */
  | { type: 'navigate'; target: NavigationTarget }
  /** What the shell's updater is doing (electron/updates.ts): the Host tells the windows. */
  | { type: 'update'; state: UpdateState }

export type FromHost =
  | { type: 'ready'; warnings: string[]; url?: string; notes?: string[] }
  /** The Host could not open (its data folder is held, its database is newer or unreadable…): starting it again would fail the same way. */
  | { type: 'failed'; message: string }
  | { type: 'pong'; id: number }
  | { type: 'closed' }
  | { type: 'call'; id: number; call: ShellCall }
  /** How many items wait in the inbox (the dock badge). */
  | { type: 'badge'; count: number }

/** What the Host asks of the desktop shell, with what each answers. */
export type ShellCall =
  | { name: 'confirmCommand'; change: CommandChange }
  | { name: 'pickFolder' }
  | { name: 'revealPath'; path: string }
  | { name: 'secrets.get'; key: string }
  | { name: 'secrets.set'; key: string; value: string }
  | { name: 'secrets.delete'; key: string }
  /** The user said yes (and, mid-turn, confirmed): install the downloaded update now or at the next quit. */
  | { name: 'installUpdate'; when: 'restart' | 'quit' }

export interface ShellAnswers {
  confirmCommand: ConfirmAnswer
  pickFolder: string | null
  revealPath: null
  'secrets.get': string | undefined
  'secrets.set': null
  'secrets.delete': null
  installUpdate: null
}

/** What travels on a window's port: the WebSocket's envelope (shared/wire-envelope.ts), as structured clones. */
export type PortRequest = { kind: 'request'; id: number; method: string; params: unknown }
export type PortMessage = ({ kind: 'response'; id: number } & WireResponse) | { kind: 'events'; events: HostEvent[] }
