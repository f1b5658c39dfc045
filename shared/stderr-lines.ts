/**
 * The lines of a program's stderr that explain why it failed, found among
 * everything it wrote rather than taken from the end: the end of a crash is
 * usually stack frames and a runtime's version ("Node.js v20…"), while the
 * sentence that explains it ("Cannot find package 'tsx' imported from …") sits
 * above them. Pure: the Host reads an agent's stderr with it, and so could
 * the window.
 */

/** What a line says when it explains a failure. */
const ERROR_WORDS =
  /\b(errors?|err!|exceptions?|fatal|panic(?:ked)?|cannot|can't|could not|couldn't|unable to|not found|no such file|not recognized|not installed|not supported|unsupported|enoent|eacces|eperm|econnrefused|econnreset|enotfound|etimedout|permission denied|access denied|denied|refused|refusing|failed|failure|unauthori[sz]ed|forbidden|invalid|missing|segmentation fault|aborted)\b/i
/** TypeError, ModuleNotFoundError, IllegalStateException, ERR_MODULE_NOT_FOUND: error names glued to other words. */
const ERROR_NAMES = /[a-z](?:Error|Exception)\b|\bE[A-Z]{3,}\b|\bERR_[A-Z_]+\b/
/** A warning explains a failure only when nothing else does. */
const WARNING = /^\W*(?:warn(?:ing)?|deprecat\w*)\b/i

/** Stack frames and the like: where it happened, not what. */
const FRAME = [
  /^\s+at\s+\S/, // JavaScript, Java
  /^\s*File ".*", line \d+/, // Python
  /^\s*\d+:\s+0x[0-9a-f]+/i, // Rust backtrace
  /^\s+\S+\.go:\d+/, // Go
  /^goroutine \d+ \[/, // Go
  /^\s*(?:Traceback \(most recent call last\)|Stack backtrace|stack backtrace):?\s*$/i,
  /^\s*note: run with `RUST_BACKTRACE/,
  /^Node\.js v\d/,
  /^\(Use `node --trace-\w+/
]
/** A line of an error object's dump (Node prints `{ code: 'ERR_…', errno: -2, … }` under a stack). */
const PROPERTY = /^\s+(?:code|errno|syscall|path|dest|address|port|url|signal|spawnargs|cmd|requireStack|input|\[cause\]):/
/** The caret under a line of source Node and Python print above an error. */
const CARET = /^\s*\^+~*\s*$/
/** Where that source line is, printed above it (`node:internal/…/resolve:873`, `file:///…/agent.mjs:1`). */
const LOCATION = /^(?:file:\/\/|node:)?\S+:\d+\s*$/

export const EXPLAINING_LINES = 6

/**
 * The lines that explain a failure, in the order written, each once, at most
 * `max` (the first ones: later lines are usually consequences): lines that say
 * error, cannot, not found, ENOENT, permission denied, `Error:` and the like;
 * a stack trace's message, not its frames (the line before the first frame
 * counts even when it names no error); a line that ends with a colon brings
 * the next one (Rust's "panicked at …:" and its message). Warnings only when
 * nothing else explains it. Terminal escapes are removed. Empty when nothing
 * does: then the caller may fall back on the last lines (see lastLines).
 */
export function explainingLines(stderr: string, max = EXPLAINING_LINES): string[] {
  const lines = linesOf(stderr)
  const skip = new Set<number>()
  lines.forEach((line, i) => {
    if (CARET.test(line)) {
      // The caret, the source line above it, and the location above that.
      skip.add(i)
      if (i > 0) skip.add(i - 1)
      if (i > 1 && LOCATION.test(lines[i - 2])) skip.add(i - 2)
    }
    if (/^\s*File ".*", line \d+/.test(line) && i + 1 < lines.length && /^\s{4,}\S/.test(lines[i + 1])) skip.add(i + 1)
  })
  const frame = (i: number): boolean => FRAME.some((re) => re.test(lines[i]))

  const errors: number[] = []
  const warnings: number[] = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (skip.has(i) || !line.trim() || frame(i) || PROPERTY.test(line)) continue
    const messageOfTrace = i + 1 < lines.length && /^\s+at\s+\S/.test(lines[i + 1]) && !/^\s+at\s/.test(line)
    if (WARNING.test(line)) warnings.push(i)
    else if (messageOfTrace || ERROR_WORDS.test(line) || ERROR_NAMES.test(line)) {
      errors.push(i)
      const next = i + 1
      if (/:\s*$/.test(line) && next < lines.length && lines[next].trim() && !frame(next) && !skip.has(next)) errors.push(next)
    }
  }
  const chosen = errors.length ? errors : warnings
  const said = new Set<string>()
  const found: string[] = []
  for (const i of chosen) {
    const text = lines[i].trim()
    if (said.has(text)) continue
    said.add(text)
    found.push(text)
    if (found.length >= max) break
  }
  return found
}

/** The last non-empty lines, terminal escapes removed: what to show when nothing explains a failure. */
export function lastLines(stderr: string, count = EXPLAINING_LINES): string[] {
  return linesOf(stderr)
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(-count)
}

/** Lines without terminal escapes; a line rewritten with carriage returns (a progress bar) is what it ended as. */
function linesOf(text: string): string[] {
  return text
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b\[[0-?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g, '')
    .split('\n')
    .map((line) => {
      const parts = line.replace(/\r+$/, '').split('\r')
      return parts[parts.length - 1].replace(/\s+$/, '')
    })
}
