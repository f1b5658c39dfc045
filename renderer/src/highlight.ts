import hljs from 'highlight.js/lib/core'
import bash from 'highlight.js/lib/languages/bash'
import c from 'highlight.js/lib/languages/c'
import cpp from 'highlight.js/lib/languages/cpp'
import csharp from 'highlight.js/lib/languages/csharp'
import css from 'highlight.js/lib/languages/css'
import diff from 'highlight.js/lib/languages/diff'
import dockerfile from 'highlight.js/lib/languages/dockerfile'
import go from 'highlight.js/lib/languages/go'
import ini from 'highlight.js/lib/languages/ini'
import java from 'highlight.js/lib/languages/java'
import javascript from 'highlight.js/lib/languages/javascript'
import json from 'highlight.js/lib/languages/json'
import kotlin from 'highlight.js/lib/languages/kotlin'
import makefile from 'highlight.js/lib/languages/makefile'
import markdownLanguage from 'highlight.js/lib/languages/markdown'
import php from 'highlight.js/lib/languages/php'
import python from 'highlight.js/lib/languages/python'
import ruby from 'highlight.js/lib/languages/ruby'
import rust from 'highlight.js/lib/languages/rust'
import scss from 'highlight.js/lib/languages/scss'
import shell from 'highlight.js/lib/languages/shell'
import sql from 'highlight.js/lib/languages/sql'
import swift from 'highlight.js/lib/languages/swift'
import typescript from 'highlight.js/lib/languages/typescript'
import xml from 'highlight.js/lib/languages/xml'
import yaml from 'highlight.js/lib/languages/yaml'

/**
 * Syntax highlighting for code in messages and in file previews: highlight.js
 * core with the languages agents write most (registered by hand, so the
 * bundle carries only these). Its output escapes the code; callers still pass
 * it through DOMPurify with the rest of the message.
 */
const languages = {
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  kotlin,
  makefile,
  markdown: markdownLanguage,
  php,
  python,
  ruby,
  rust,
  scss,
  shell,
  sql,
  swift,
  typescript,
  xml,
  yaml
}
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language)
hljs.registerAliases(['vue', 'svelte'], { languageName: 'xml' })
hljs.registerAliases(['toml'], { languageName: 'ini' })
hljs.registerAliases(['jsonc', 'json5'], { languageName: 'json' })
hljs.registerAliases(['mjs', 'cjs'], { languageName: 'javascript' })
hljs.registerAliases(['mts', 'cts'], { languageName: 'typescript' })

/** Code beyond this size is shown plain: highlighting it would stall the window. */
const MAX_HIGHLIGHT_CHARS = 100_000
const cache = new Map<string, { html: string; language?: string }>()
const CACHE_SIZE = 300

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** The language highlight.js knows by this name or alias, if any. */
export function knownLanguage(lang: string): string | undefined {
  if (!lang) return undefined
  return hljs.getLanguage(lang.toLowerCase()) ? lang.toLowerCase() : undefined
}

/**
 * Highlighted HTML for `code` in `lang` (escaped plain text when the language
 * is unknown or the code too long), and the language used.
 */
export function highlightCode(code: string, lang: string): { html: string; language?: string } {
  const language = knownLanguage(lang)
  if (!language || code.length > MAX_HIGHLIGHT_CHARS) return { html: escapeHtml(code), language }
  const key = `${language}\u0000${code}`
  const hit = cache.get(key)
  if (hit) return hit
  let result: { html: string; language?: string }
  try {
    result = { html: hljs.highlight(code, { language, ignoreIllegals: true }).value, language }
  } catch {
    result = { html: escapeHtml(code), language }
  }
  cache.set(key, result)
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string)
  return result
}
