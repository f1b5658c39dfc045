import { dialog, type BrowserWindow, type MessageBoxOptions } from 'electron'
import { changeLines, type CommandChange } from '../shared/confirmation'
import type { ConfirmCommand } from './host/contract/confirmations'

/**
 * How the desktop app confirms a change that would run a program: a native
 * message box of the main process, which no script in the page can see into
 * or click, showing the exact command line, its folder and variables (secret
 * values never). Cancel is the default button and what Esc or closing it
 * answers. One box at a time: a second change waits for the first answer.
 * The code a page may send along is ignored (it is `serve`'s way).
 */

export const CANCEL = 0
export const CONFIRM = 1

/** The message box for a change: its title, what would run, Cancel first and default. */
export function confirmationBox(change: CommandChange): MessageBoxOptions {
  const [action, ...programs] = changeLines(change)
  const warning =
    change.note ??
    (change.programs.length
      ? 'Switchboard will run this with your rights. Cancel if you did not ask for it.'
      : 'Agents get this with your rights. Cancel if you did not ask for it.')
  const detail = [...programs.slice(programs[0] === '' ? 1 : 0), '', warning]
  return {
    type: 'warning',
    title: change.programs.length ? 'Confirm a command' : 'Confirm a change',
    message: `${action}?`,
    detail: detail.join('\n'),
    buttons: ['Cancel', change.confirm],
    defaultId: CANCEL,
    cancelId: CANCEL,
    noLink: true
  }
}

export function dialogConfirmation(parent: () => BrowserWindow | null): ConfirmCommand {
  let queue: Promise<unknown> = Promise.resolve()
  return (change) => {
    const answer = queue.then(async () => {
      const box = confirmationBox(change)
      const window = parent()
      const { response } = window && !window.isDestroyed() ? await dialog.showMessageBox(window, box) : await dialog.showMessageBox(box)
      return response === CONFIRM
    })
    queue = answer.catch(() => undefined)
    return answer.then((confirmed) =>
      confirmed
        ? { confirmed: true as const }
        : { confirmed: false as const, code: 'confirmation_refused' as const, message: 'Cancelled in the confirmation dialog: nothing was changed.' }
    )
  }
}
