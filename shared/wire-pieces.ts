/**
 * How a long server message crosses the loopback WebSocket (`ws-server.ts` to
 * the page's `host/transport.ts`). Chromium takes a text frame in whole on
 * the page's main thread: one of 5 MB held it for about a second. And a
 * string of megabytes costs the main thread whatever way it arrives in one
 * piece (JSON.parse, a structured clone from a worker: 50-150 ms for 10 MB on
 * the loaded build machine). So a message whose JSON is over
 * `WIRE_PIECE_CHARS` goes as:
 *
 * 1. a header, `WirePieces`: how many frames its skeleton takes, and for each
 *    string over `WIRE_TEXT_CHARS` that was taken out of it, where it goes
 *    (its path) and how many frames it takes;
 * 2. the skeleton's JSON (the message with those strings empty), in frames;
 * 3. each string taken out, as raw text in frames.
 *
 * Every frame is at most `WIRE_PIECE_CHARS` characters, never ending inside a
 * surrogate pair. The page takes each frame in its own task, joins the
 * pieces (a copy: milliseconds), parses only the skeleton and puts the
 * strings back (`joinWire`).
 */

export interface WirePieces {
  kind: 'pieces'
  /** Frames of the skeleton's JSON. */
  count: number
  /** The strings taken out of it, in the order their frames follow. */
  texts: { path: (string | number)[]; count: number }[]
}

export const WIRE_PIECE_CHARS = 64 * 1024
/** Strings longer than this travel outside the skeleton's JSON. */
export const WIRE_TEXT_CHARS = 16 * 1024

/** `text` in pieces of at most `size` characters, never ending between the halves of a surrogate pair. */
export function wirePieces(text: string, size = WIRE_PIECE_CHARS): string[] {
  const pieces: string[] = []
  for (let start = 0; start < text.length;) {
    let end = Math.min(text.length, start + size)
    const last = text.charCodeAt(end - 1)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
    pieces.push(text.slice(start, end))
    start = end
  }
  return pieces
}

/**
 * The frames that carry `message` (JSON data): one when it is short, else a header, the skeleton and the strings.
 * A long message is most often a batch of many short records (an agent streaming): its JSON, already made, is then
 * its skeleton as it is. The long strings are found without copying the message (a copy, and a path for every
 * value in it, was most of what the serve Host allocated while four agents streamed).
 */
export function wireFrames(message: unknown): string[] {
  const json = JSON.stringify(message)
  if (json.length <= WIRE_PIECE_CHARS) return [json]
  const texts: { path: (string | number)[]; text: string }[] = []
  longTexts(message, [], texts)
  const skeleton = wirePieces(texts.length === 0 ? json : JSON.stringify(message, withoutLongTexts))
  const textFrames = texts.map((t) => wirePieces(t.text))
  const header: WirePieces = { kind: 'pieces', count: skeleton.length, texts: texts.map((t, i) => ({ path: t.path, count: textFrames[i].length })) }
  return [JSON.stringify(header), ...skeleton, ...textFrames.flat()]
}

/** Each string of JSON data over `WIRE_TEXT_CHARS`, with its path, in the order JSON.stringify meets them (`path` is the walk's own). */
function longTexts(value: unknown, path: (string | number)[], out: { path: (string | number)[]; text: string }[]): void {
  if (typeof value === 'string') {
    if (value.length > WIRE_TEXT_CHARS) out.push({ path: [...path], text: value })
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i)
      longTexts(value[i], path, out)
      path.pop()
    }
  } else if (value !== null && typeof value === 'object') {
    // for...in, not Object.keys: no array made for each object (JSON data has no inherited keys).
    for (const key in value) {
      path.push(key)
      longTexts((value as Record<string, unknown>)[key], path, out)
      path.pop()
    }
  }
}

/** JSON.stringify's replacer for the skeleton: each string over `WIRE_TEXT_CHARS` made empty. */
function withoutLongTexts(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.length > WIRE_TEXT_CHARS ? '' : value
}

/** The header `data` is, when it is one (a frame that starts like one and is well formed). */
export function wireHeader(data: string): WirePieces | null {
  if (!data.startsWith('{"kind":"pieces"')) return null
  try {
    const header = JSON.parse(data) as WirePieces
    const counts = [header.count, ...header.texts.map((t) => t.count)]
    return header.kind === 'pieces' &&
      counts.every((n) => Number.isInteger(n) && n >= 0) &&
      header.count > 0 &&
      header.texts.every((t) => Array.isArray(t.path))
      ? header
      : null
  } catch {
    return null
  }
}

/** How many frames follow a header. */
export function wireFrameCount(header: WirePieces): number {
  return header.texts.reduce((n, t) => n + t.count, header.count)
}

/** The message the frames after `header` carry: the skeleton parsed, each string put back where it was. Throws when they do not fit. */
export function joinWire(header: WirePieces, frames: string[]): unknown {
  const message = JSON.parse(frames.slice(0, header.count).join('')) as unknown
  let at = header.count
  for (const { path, count } of header.texts) {
    const text = frames.slice(at, at + count).join('')
    at += count
    let parent = message as Record<string | number, unknown> | null
    for (const key of path.slice(0, -1))
      parent = parent && typeof parent === 'object' ? (parent[key] as Record<string | number, unknown> | null) : null
    const last = path[path.length - 1]
    if (!parent || typeof parent !== 'object' || last === undefined || parent[last] !== '')
      throw new Error(`no place for a text at ${path.join('.')}`)
    parent[last] = text
  }
  return message
}
