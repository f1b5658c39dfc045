/**
 * How an agent is recognised at a glance: a monogram and a hue of its own.
 * Known agents get their usual colour; any other gets a stable hue from its id.
 */

const knownHues: [RegExp, number][] = [
  [/claude/i, 24],
  [/gemini/i, 215],
  [/codex|openai/i, 160]
]

export function agentMonogram(name: string): string {
  const words = name.split(/[\s_-]+/).filter((w) => /[\p{L}\p{N}]/u.test(w))
  if (words.length === 0) return '?'
  const first = Array.from(words[0])[0] ?? '?'
  if (words.length === 1) {
    const second = Array.from(words[0])[1] ?? ''
    return (first.toUpperCase() + second.toLowerCase()).trim()
  }
  const last = Array.from(words[words.length - 1])[0] ?? ''
  return (first + last).toUpperCase()
}

export function agentHue(agentId: string, name = ''): number {
  for (const [pattern, hue] of knownHues) if (pattern.test(name) || pattern.test(agentId)) return hue
  let hash = 0
  for (const char of agentId) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0
  // Spread over the wheel in steps that keep neighbours apart.
  return (hash * 137) % 360
}
