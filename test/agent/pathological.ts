/**
 * Agent text that is costly to show: generated inside the scripted agent
 * (`/payload KIND [SIZE]`), so a test's prompt stays short. Each is what a
 * held-out run sent and a renderer without bounds spent minutes and gigabytes
 * on: a 5 MB single line, 2,000 nested quotes, a 2,000-level list, 100,000
 * `[`, 30,000 `*a **b`. The sizes are the defaults; a SIZE argument scales
 * one down or up.
 */

export interface PathologicalKind {
  /** The default size: characters for `line` and `word`, repetitions for the rest. */
  size: number
  make(size: number): string
  /** What it is, for test names and the benchmark table. */
  describe(size: number): string
}

const count = (n: number): string => n.toLocaleString('en-US')

export const PATHOLOGICAL: Record<string, PathologicalKind> = {
  /** One line of words and no line break: SIZE characters. */
  line: {
    size: 5_000_000,
    make: (size) => {
      const words = ['lorem', 'ipsum', 'dolor', 'sit', 'amet,', 'consectetur', 'adipiscing', 'elit.', '1234567']
      let text = ''
      for (let i = 0; text.length < size; i++) text += words[i % words.length] + ' '
      return text.slice(0, size)
    },
    describe: (size) => `a single line of ${(size / 1e6).toFixed(1)} MB`
  },
  /** One unbreakable word of SIZE characters. */
  word: {
    size: 1_000_000,
    make: (size) => 'x'.repeat(size),
    describe: (size) => `one word of ${count(size)} characters`
  },
  /** SIZE block quotes, each inside the one before. */
  quotes: {
    size: 2_000,
    make: (size) => '> '.repeat(size) + 'the innermost quote',
    describe: (size) => `${count(size)} nested quotes`
  },
  /** A list SIZE levels deep, one item per level. */
  list: {
    size: 2_000,
    make: (size) => Array.from({ length: size }, (_, i) => `${'  '.repeat(i)}- level ${i + 1}`).join('\n'),
    describe: (size) => `a list ${count(size)} levels deep`
  },
  /** SIZE opening brackets: the start of as many links that never close. */
  brackets: {
    size: 100_000,
    make: (size) => '['.repeat(size),
    describe: (size) => `${count(size)} [`
  },
  /** `*a **b` SIZE times: emphasis openers that never match. */
  emphasis: {
    size: 30_000,
    make: (size) => '*a **b'.repeat(size),
    describe: (size) => `${count(size)} × *a **b`
  }
}

/** The text of a payload: KIND at SIZE (its default when SIZE is not a positive number). */
export function pathologicalText(kind: string, size?: number): string {
  const payload = PATHOLOGICAL[kind]
  if (!payload) throw new Error(`unknown payload ${kind}: one of ${Object.keys(PATHOLOGICAL).join(', ')}`)
  return payload.make(size && size > 0 ? Math.floor(size) : payload.size)
}
