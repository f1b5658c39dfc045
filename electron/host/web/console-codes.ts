import { randomInt, timingSafeEqual } from 'node:crypto'
import { changeLines, type CommandChange } from '../../../shared/confirmation'
import type { ConfirmCommand } from '../contract/confirmations'

/**
 * How `npm run serve` confirms a change that would run a program: the page
 * cannot show a dialog the page itself could not click, so `serve` prints what
 * would run and a short code on its console, and the change is made only when
 * the page sends the same request again with that code, typed by the user. The
 * code exists only on the console: a script in the page can ask for one but
 * cannot read it.
 *
 * A code confirms exactly the change it was printed for (another change, even
 * with the right code, is refused), once, for five minutes; five wrong codes
 * for a change drop its code (asking again prints a new one).
 */

/** Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L). */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789'
const CODE_LENGTH = 6
export const CODE_TTL_MS = 5 * 60_000
export const MAX_WRONG_CODES = 5
/** Codes waiting at once; asking for more drops the oldest. */
const MAX_PENDING = 20

interface Pending {
  code: string
  expires: number
  wrong: number
}

export interface ConsoleCodesOptions {
  /** Writes one line to the console (`serve`: stdout). */
  print: (line: string) => void
  now?: () => number
}

export class ConsoleCodes {
  /** By the change they confirm (its whole text). */
  private readonly pending = new Map<string, Pending>()
  private readonly now: () => number

  constructor(private readonly options: ConsoleCodesOptions) {
    this.now = options.now ?? Date.now
  }

  readonly confirm: ConfirmCommand = async (change, code) => {
    const key = JSON.stringify(change)
    this.dropExpired()
    if (code === undefined || code.trim() === '') {
      this.ask(key, change)
      return {
        confirmed: false,
        code: 'confirmation_required',
        message: `Confirm it on the console where Switchboard serve runs: type the code it printed there. Nothing was changed yet.`
      }
    }
    const waiting = this.pending.get(key)
    if (!waiting) {
      return {
        confirmed: false,
        code: 'confirmation_refused',
        message:
          'No code is waiting for this change (it expired after 5 minutes, was used, or was printed for a different change). Nothing was changed; ask for a new code.'
      }
    }
    if (sameCode(normalise(code), waiting.code)) {
      this.pending.delete(key)
      this.options.print(`Confirmed: ${changeLines(change)[0]}`)
      return { confirmed: true }
    }
    waiting.wrong++
    if (waiting.wrong >= MAX_WRONG_CODES) {
      this.pending.delete(key)
      return {
        confirmed: false,
        code: 'confirmation_refused',
        message: `Wrong code, ${MAX_WRONG_CODES} times: this code no longer works. Nothing was changed; ask for a new code.`
      }
    }
    return {
      confirmed: false,
      code: 'confirmation_refused',
      message: 'Wrong code: nothing was changed. Type the code printed on the console where Switchboard serve runs.'
    }
  }

  /** A new code for the change (replacing one it had), printed with what would run. */
  private ask(key: string, change: CommandChange): void {
    const code = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')
    this.pending.delete(key)
    this.pending.set(key, { code, expires: this.now() + CODE_TTL_MS, wrong: 0 })
    while (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string)
    const print = this.options.print
    print('')
    print(`The Switchboard page asks to confirm a change that ${change.programs.length ? 'runs a program' : 'widens what agents reach'}:`)
    for (const line of changeLines(change)) print(line ? `  ${line}` : '')
    print(`To confirm, type this code in the page: ${code.slice(0, 3)}-${code.slice(3)}  (for this change only, once, within 5 minutes)`)
    print('If you did not ask for this, do not type it.')
    print('')
  }

  private dropExpired(): void {
    const now = this.now()
    for (const [key, pending] of this.pending) if (pending.expires <= now) this.pending.delete(key)
  }
}

/** What the user typed, as a code: letters upper-cased, spaces and hyphens dropped. */
function normalise(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '')
}

/** Compared in constant time (how long a guess took says nothing of the code). */
function sameCode(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
