import { shallowRef } from 'vue'
import type { HLJSApi, LanguageFn } from 'highlight.js'

/**
 * Syntax highlighting for code in messages and in file previews: highlight.js
 * core with the languages agents write most. Neither the core nor a language
 * is in the window's first script: each is its own chunk, fetched the first
 * time a code block asks for it. Until it has arrived the block is shown
 * plain (escaped) at once; `languagesLoaded` then changes and whoever renders
 * code renders it again, highlighted. Its output escapes the code; callers
 * still pass it through DOMPurify with the rest of the message.
 */
const loaders: Record<string, () => Promise<{ default: LanguageFn }>> = {
  bash: () => import('highlight.js/lib/languages/bash'),
  c: () => import('highlight.js/lib/languages/c'),
  cpp: () => import('highlight.js/lib/languages/cpp'),
  csharp: () => import('highlight.js/lib/languages/csharp'),
  css: () => import('highlight.js/lib/languages/css'),
  diff: () => import('highlight.js/lib/languages/diff'),
  dockerfile: () => import('highlight.js/lib/languages/dockerfile'),
  go: () => import('highlight.js/lib/languages/go'),
  ini: () => import('highlight.js/lib/languages/ini'),
  java: () => import('highlight.js/lib/languages/java'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  json: () => import('highlight.js/lib/languages/json'),
  kotlin: () => import('highlight.js/lib/languages/kotlin'),
  makefile: () => import('highlight.js/lib/languages/makefile'),
  markdown: () => import('highlight.js/lib/languages/markdown'),
  php: () => import('highlight.js/lib/languages/php'),
  python: () => import('highlight.js/lib/languages/python'),
  ruby: () => import('highlight.js/lib/languages/ruby'),
  rust: () => import('highlight.js/lib/languages/rust'),
  scss: () => import('highlight.js/lib/languages/scss'),
  shell: () => import('highlight.js/lib/languages/shell'),
  sql: () => import('highlight.js/lib/languages/sql'),
  swift: () => import('highlight.js/lib/languages/swift'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  xml: () => import('highlight.js/lib/languages/xml'),
  yaml: () => import('highlight.js/lib/languages/yaml')
}

/** The languages highlighted (each loaded on first use). */
export const HIGHLIGHT_LANGUAGES = Object.keys(loaders)

/**
 * Every other name a language answers to, known before it is loaded: the
 * aliases each language declares (test/component/markdown.test.ts checks
 * this table against the languages themselves) and a few of our own.
 */
export const LANGUAGE_ALIASES: Record<string, readonly string[]> = {
  bash: ['sh', 'zsh'],
  c: ['h'],
  cpp: ['cc', 'c++', 'h++', 'hpp', 'hh', 'hxx', 'cxx'],
  csharp: ['cs', 'c#'],
  diff: ['patch'],
  dockerfile: ['docker'],
  go: ['golang'],
  ini: ['toml'],
  java: ['jsp'],
  javascript: ['js', 'jsx', 'mjs', 'cjs'],
  json: ['jsonc', 'json5'],
  kotlin: ['kt', 'kts', 'ktm', 'ktx'],
  makefile: ['mk', 'mak', 'make'],
  markdown: ['md', 'mkdown', 'mkd'],
  python: ['py', 'gyp', 'ipython'],
  ruby: ['rb', 'gemspec', 'podspec', 'thor', 'irb'],
  rust: ['rs'],
  shell: ['console', 'shellsession'],
  typescript: ['ts', 'tsx', 'mts', 'cts'],
  xml: ['html', 'xhtml', 'rss', 'atom', 'xjb', 'xsd', 'xsl', 'plist', 'wsf', 'svg'],
  yaml: ['yml']
}
/** Our own aliases, beyond those the languages declare. */
const EXTRA_ALIASES: Record<string, string> = { vue: 'xml', svelte: 'xml' }

/** Language name by every name and alias (lower case). */
const byName = new Map<string, string>()
for (const name of Object.keys(loaders)) byName.set(name, name)
for (const [name, aliases] of Object.entries(LANGUAGE_ALIASES)) for (const alias of aliases) byName.set(alias, name)
for (const [alias, name] of Object.entries(EXTRA_ALIASES)) byName.set(alias, name)

/** Counts the languages that have arrived: read it where code is rendered, to render again when one does. */
export const languagesLoaded = shallowRef(0)

let core: Promise<HLJSApi> | undefined
let hljs: HLJSApi | undefined
/** Languages registered with the core, and those on their way (or failed: a failed one is asked for again next time). */
const ready = new Set<string>()
const loading = new Map<string, Promise<void>>()

/** Fetches the core and `name` and registers it; resolves once it can highlight (never rejects: a failure leaves the code plain). */
function load(name: string): Promise<void> {
  const pending = loading.get(name)
  if (pending) return pending
  core ??= import('highlight.js/lib/core').then((module) => (hljs = module.default))
  const done = Promise.all([core, loaders[name]()])
    .then(([api, language]) => {
      api.registerLanguage(name, language.default)
      ready.add(name)
      languagesLoaded.value++
    })
    .catch((error: unknown) => {
      console.error(`Could not load highlighting for ${name}`, error)
      loading.delete(name)
      core = hljs ? core : undefined
    })
  loading.set(name, done)
  return done
}

/** Resolves when every language asked for so far has arrived (or failed). */
export async function languagesSettled(): Promise<void> {
  await Promise.all(loading.values())
}

/** Fetches these languages now (by name or alias; unknown ones are ignored). */
export function preloadLanguages(...names: string[]): Promise<void> {
  return Promise.all(names.map((lang) => byName.get(lang.toLowerCase())).flatMap((name) => (name ? [load(name)] : []))).then(() => undefined)
}

/** Code beyond this size is shown plain: highlighting it would stall the window. */
const MAX_HIGHLIGHT_CHARS = 100_000
const cache = new Map<string, { html: string; language?: string }>()
const CACHE_SIZE = 300

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** The name or alias as given (lower case) when highlight.js has that language, loaded or not. */
export function knownLanguage(lang: string): string | undefined {
  if (!lang) return undefined
  return byName.has(lang.toLowerCase()) ? lang.toLowerCase() : undefined
}

/**
 * Highlighted HTML for `code` in `lang`, and the language used. Escaped plain
 * text when the language is unknown, the code too long, or the language not
 * loaded yet (then it is fetched, and `languagesLoaded` changes when it is in).
 */
export function highlightCode(code: string, lang: string): { html: string; language?: string } {
  const language = knownLanguage(lang)
  if (!language || code.length > MAX_HIGHLIGHT_CHARS) return { html: escapeHtml(code), language }
  const name = byName.get(language) as string
  if (!hljs || !ready.has(name)) {
    void load(name)
    return { html: escapeHtml(code), language }
  }
  const key = `${language}\u0000${code}`
  const hit = cache.get(key)
  if (hit) return hit
  let result: { html: string; language?: string }
  try {
    result = { html: hljs.highlight(code, { language: name, ignoreIllegals: true }).value, language }
  } catch {
    result = { html: escapeHtml(code), language }
  }
  cache.set(key, result)
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string)
  return result
}
