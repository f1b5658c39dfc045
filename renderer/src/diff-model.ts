import { diffWordsWithSpace } from 'diff'
import { filePatch, hunkHeader } from '../../shared/workspace'

/**
 * A file change as rows to show: jsdiff's structured patch (hunks with three
 * lines of context), removed and added lines paired for the side-by-side
 * view, and within a pair the words that changed.
 */

export interface WordPart {
  text: string
  changed: boolean
}

export interface DiffLine {
  kind: 'context' | 'add' | 'del'
  oldNo?: number
  newNo?: number
  text: string
  /** Within a changed line paired with its counterpart: which parts changed. */
  words?: WordPart[]
}

export interface DiffHunk {
  header: string
  lines: DiffLine[]
}

export interface SplitRow {
  left?: DiffLine
  right?: DiffLine
}

export interface DiffModel {
  hunks: DiffHunk[]
  added: number
  removed: number
  /** True when the texts were too different to compare in reasonable time; `hunks` is then empty. */
  tooLarge: boolean
}

const WORD_DIFF_MAX_CHARS = 400

/** `words`: mark the words that changed within paired lines (jsdiff once a pair); a diff only glanced at skips it. */
export function buildDiff(oldText: string | null | undefined, newText: string, { words = true }: { words?: boolean } = {}): DiffModel {
  const patch = filePatch(oldText ?? '', newText)
  if (!patch) return { hunks: [], added: 0, removed: 0, tooLarge: true }
  let added = 0
  let removed = 0
  const hunks = patch.hunks.map((hunk): DiffHunk => {
    let oldNo = hunk.oldStart
    let newNo = hunk.newStart
    const lines: DiffLine[] = []
    for (const raw of hunk.lines) {
      const sign = raw[0]
      const text = raw.slice(1)
      if (sign === '+') {
        lines.push({ kind: 'add', newNo: newNo++, text })
        added++
      } else if (sign === '-') {
        lines.push({ kind: 'del', oldNo: oldNo++, text })
        removed++
      } else if (sign === ' ') {
        lines.push({ kind: 'context', oldNo: oldNo++, newNo: newNo++, text })
      }
      // '\' (no newline at end of file) is not a line of either text.
    }
    if (words) markWords(lines)
    return { header: hunkHeader(hunk), lines }
  })
  return { hunks, added, removed, tooLarge: false }
}

/** Runs of removed lines followed by added lines, paired in order (the rest stand alone). */
function pairs(lines: DiffLine[]): [DiffLine[], DiffLine[]][] {
  const runs: [DiffLine[], DiffLine[]][] = []
  let i = 0
  while (i < lines.length) {
    if (lines[i].kind === 'context') {
      i++
      continue
    }
    const dels: DiffLine[] = []
    const adds: DiffLine[] = []
    while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++])
    while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++])
    runs.push([dels, adds])
  }
  return runs
}

function markWords(lines: DiffLine[]): void {
  for (const [dels, adds] of pairs(lines)) {
    for (let k = 0; k < Math.min(dels.length, adds.length); k++) {
      const before = dels[k]
      const after = adds[k]
      if (before.text.length > WORD_DIFF_MAX_CHARS || after.text.length > WORD_DIFF_MAX_CHARS) continue
      const changes = diffWordsWithSpace(before.text, after.text)
      const common = changes.filter((c) => !c.added && !c.removed).reduce((n, c) => n + c.value.length, 0)
      // Lines that share little are shown as replaced, not as a confetti of word changes.
      if (common < Math.max(before.text.length, after.text.length) * 0.4) continue
      before.words = changes.filter((c) => !c.added).map((c) => ({ text: c.value, changed: c.removed }))
      after.words = changes.filter((c) => !c.removed).map((c) => ({ text: c.value, changed: c.added }))
    }
  }
}

/** The hunk as rows of the side-by-side view: context on both sides, removed beside added. */
export function splitRows(hunk: DiffHunk): SplitRow[] {
  const rows: SplitRow[] = []
  let i = 0
  const lines = hunk.lines
  while (i < lines.length) {
    if (lines[i].kind === 'context') {
      rows.push({ left: lines[i], right: lines[i] })
      i++
      continue
    }
    const dels: DiffLine[] = []
    const adds: DiffLine[] = []
    while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++])
    while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++])
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push({ left: dels[k], right: adds[k] })
  }
  return rows
}
