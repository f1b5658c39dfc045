import { readFile, stat } from 'node:fs/promises'
import { dirname, join, posix } from 'node:path'

/**
 * The JavaScript the built window loads before its first paint: the module
 * script(s) index.html names, every chunk it modulepreloads, and every chunk
 * those import statically (`import … from "./x.js"`, `import "./x.js"`),
 * transitively. Chunks only reached by a dynamic `import("./x.js")` are not
 * counted: they are fetched when the part that needs them is first shown.
 * Sizes are of the minified files as built, before compression.
 */
export interface InitialJavaScript {
  bytes: number
  /** Each counted file (relative to the renderer folder) and its size, biggest first. */
  files: { file: string; bytes: number }[]
  /** Every .js file of the build, for scale. */
  allBytes: number
}

const SCRIPT = /<script\b[^>]*\btype="module"[^>]*\bsrc="([^"]+)"/g
const PRELOAD = /<link\b[^>]*\brel="modulepreload"[^>]*\bhref="([^"]+)"/g
/** Static imports and re-exports in a minified chunk: `from"./x.js"`, `import"./x.js"` (not `import("./x.js")`). */
const STATIC_IMPORT = /(?:\bfrom\s*|\bimport\s*)["'](\.{1,2}\/[^"']+\.js)["']/g

export async function initialJavaScript(rendererDir: string): Promise<InitialJavaScript> {
  const html = await readFile(join(rendererDir, 'index.html'), 'utf8')
  const named = [...html.matchAll(SCRIPT), ...html.matchAll(PRELOAD)].map((m) => posix.normalize(m[1].replace(/^\.\//, '')))
  if (named.length === 0) throw new Error(`${join(rendererDir, 'index.html')} names no module script: is it a build?`)
  const seen = await staticClosure(rendererDir, named)
  const files = [...seen].map(([file, bytes]) => ({ file, bytes })).sort((a, b) => b.bytes - a.bytes)
  return { bytes: files.reduce((sum, f) => sum + f.bytes, 0), files, allBytes: await allJs(rendererDir) }
}

/** The chunks `start` (files relative to the renderer folder) and those they import statically, transitively, with their sizes. */
export async function staticClosure(rendererDir: string, start: string[]): Promise<Map<string, number>> {
  const pending = [...start]
  const seen = new Map<string, number>()
  while (pending.length > 0) {
    const file = pending.pop() as string
    if (seen.has(file)) continue
    const code = await readFile(join(rendererDir, file), 'utf8')
    seen.set(file, Buffer.byteLength(code))
    for (const m of code.matchAll(STATIC_IMPORT)) pending.push(posix.join(posix.dirname(file), m[1]))
  }
  return seen
}

async function allJs(rendererDir: string): Promise<number> {
  const { readdir } = await import('node:fs/promises')
  const assets = join(rendererDir, 'assets')
  let total = 0
  for (const name of await readdir(assets)) if (name.endsWith('.js')) total += (await stat(join(assets, name))).size
  return total
}

/** For a look by hand: `npx tsx bench/initial-js.ts [out/renderer]`. */
if (process.argv[1] && /initial-js\.ts$/.test(process.argv[1])) {
  const dir = process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), '..', 'out', 'renderer')
  void initialJavaScript(dir).then((r) => {
    for (const f of r.files) console.log(`${(f.bytes / 1000).toFixed(1).padStart(8)} KB  ${f.file}`)
    console.log(`${(r.bytes / 1000).toFixed(1).padStart(8)} KB  initial JavaScript (of ${(r.allBytes / 1000).toFixed(1)} KB in all)`)
  })
}
