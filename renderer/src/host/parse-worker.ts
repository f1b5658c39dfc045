/**
 * Joins and parses a long message from the Host off the page's main thread
 * (the WebSocket transport's `WirePieces`): the pieces arrive one by one,
 * `last` on the final one; the parsed message goes back by structured clone,
 * which copies a string of megabytes in milliseconds where joining and
 * parsing it took the main thread a tenth of a second or more.
 */
let pieces: string[] = []

self.onmessage = (event: MessageEvent<{ piece: string; last: boolean }>) => {
  pieces.push(event.data.piece)
  if (!event.data.last) return
  const json = pieces.join('')
  pieces = []
  try {
    postMessage({ ok: true, value: JSON.parse(json) as unknown })
  } catch {
    postMessage({ ok: false, start: json.slice(0, 200) })
  }
}
