import MarkdownIt, { type MarkdownIt as MarkdownRenderer, type Token } from 'markdown-it'
import DOMPurify from 'dompurify'
import { highlightCode } from './highlight'

/**
 * Agent (and user) text is untrusted: it becomes HTML only through markdown-it
 * with raw HTML disabled, and that HTML passes DOMPurify before it reaches the
 * DOM. markdown-it's own link check already refuses javascript: and similar
 * URLs; DOMPurify is the second wall. Code is highlighted by highlight.js
 * inside markdown-it's rendering (it escapes the code), so the highlighted
 * markup is sanitised like the rest. Links open outside the window (the
 * Electron shell sends them to the system browser).
 *
 * A message is rendered as one HTML string per top-level block (paragraph,
 * list, code block, ...). While an answer streams only its last block
 * changes, so the others are neither sanitised nor put in the DOM again
 * (a cache keyed by each block's HTML), and a reader's selection in them
 * survives the stream.
 */
/** Agent text: markdown as agents write it. A person's message keeps its line breaks (`breaks`). */
const agentMarkdown = configure(new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false }))
const userMarkdown = configure(new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false }))

function configure(markdown: MarkdownRenderer): MarkdownRenderer {
  const defaultValidateLink = markdown.validateLink.bind(markdown)
  /** `file:` links are mentions of files (never navigated to: they render as a chip); everything else as markdown-it decides. */
  markdown.validateLink = (url: string) => /^file:\/\//i.test(url.trim()) || defaultValidateLink(url)

  const renderToken = markdown.renderer.renderToken.bind(markdown.renderer)

  markdown.renderer.rules.fence = (tokens, index) => {
    const token = tokens[index]
    const lang = token.info.trim().split(/\s+/)[0] ?? ''
    const { html, language } = highlightCode(token.content, lang)
    const label = markdown.utils.escapeHtml(language ?? (lang.slice(0, 30) || 'text'))
    return (
      '<div class="code-block">' +
      `<div class="code-head"><span class="code-lang">${label}</span>` +
      '<span class="code-copy" role="button" tabindex="0" title="Copy the code" aria-label="Copy the code">Copy</span></div>' +
      `<pre><code class="hljs${language ? ` language-${markdown.utils.escapeHtml(language)}` : ''}">${html}</code></pre>` +
      '</div>\n'
    )
  }

  markdown.renderer.rules.link_open = (tokens, index, options, _env, self) => {
    const token = tokens[index]
    const href = String(token.attrGet('href') ?? '')
    if (/^file:\/\//i.test(href)) {
      const path = filePath(href)
      token.meta = { ...(token.meta ?? {}), file: true }
      return `<span class="file-link" role="link" tabindex="0" data-path="${markdown.utils.escapeHtml(path)}" title="${markdown.utils.escapeHtml(path)}">`
    }
    return self.renderToken(tokens, index, options)
  }

  markdown.renderer.rules.link_close = (tokens, index, options, _env, self) => {
    // The matching opener is the nearest link_open at the same nesting level before this token.
    for (let i = index - 1; i >= 0; i--) {
      if (tokens[i].type === 'link_open' && tokens[i].level === tokens[index].level) {
        if ((tokens[i].meta as { file?: boolean } | null)?.file) return '</span>'
        break
      }
    }
    return self.renderToken(tokens, index, options)
  }

  /** Only embedded images are shown; a remote image would be a request to a server the agent chose (and the CSP refuses it): it becomes a link. */
  markdown.renderer.rules.image = (tokens, index, options, env, self) => {
    const token = tokens[index]
    const src = String(token.attrGet('src') ?? '')
    const alt = self.renderInlineAsText(token.children ?? [], options, env)
    if (/^data:image\/(gif|png|jpeg|webp);/i.test(src)) return renderToken(tokens, index, options)
    const e = markdown.utils.escapeHtml
    if (/^file:\/\//i.test(src))
      return `<span class="file-link" role="link" tabindex="0" data-path="${e(filePath(src))}">${e(alt || filePath(src))}</span>`
    return `<a href="${e(src)}">${e(alt || 'image')}</a>`
  }

  return markdown
}

function filePath(uri: string): string {
  try {
    return decodeURIComponent(new URL(uri).pathname)
  } catch {
    return uri.replace(/^file:\/\//i, '')
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank')
    node.setAttribute('rel', 'noopener noreferrer')
  }
})

const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style']
}

export function sanitize(html: string): string {
  return DOMPurify.sanitize(html, PURIFY_CONFIG)
}

/** Sanitised HTML for a whole text (one string). */
export function renderMarkdown(text: string, options: { breaks?: boolean } = {}): string {
  return renderMarkdownBlocks(text, options).join('')
}

const sanitized = new Map<string, string>()
const SANITIZED_CACHE = 2000

/** Sanitised HTML per top-level block of the text, in order. */
export function renderMarkdownBlocks(text: string, options: { breaks?: boolean } = {}): string[] {
  const markdown = options.breaks ? userMarkdown : agentMarkdown
  const env = {}
  const tokens = markdown.parse(text, env)
  const blocks: string[] = []
  let start = 0
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].level !== 0 || tokens[i].nesting === 1) continue
    // A level-0 token that closes (or is) a block ends one.
    blocks.push(cachedSanitize(markdown.renderer.render(tokens.slice(start, i + 1) as Token[], markdown.options, env)))
    start = i + 1
  }
  if (start < tokens.length) blocks.push(cachedSanitize(markdown.renderer.render(tokens.slice(start) as Token[], markdown.options, env)))
  return blocks.filter((html) => html !== '')
}

function cachedSanitize(html: string): string {
  const hit = sanitized.get(html)
  if (hit !== undefined) {
    // Most recently used last.
    sanitized.delete(html)
    sanitized.set(html, hit)
    return hit
  }
  const clean = sanitize(html)
  sanitized.set(html, clean)
  if (sanitized.size > SANITIZED_CACHE) sanitized.delete(sanitized.keys().next().value as string)
  return clean
}
