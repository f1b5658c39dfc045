import MarkdownIt, { type Env, type MarkdownIt as MarkdownRenderer, type Token } from 'markdown-it'
import DOMPurify from 'dompurify'
import { LIMITS, hiddenWarning, markHiddenHtml, markdownVerdict, revealPath, revealText } from './agent-text'
import { highlightCode, languagesLoaded } from './highlight'

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
 *
 * Bounds (see agent-text.ts): markdown-it nests at most `LIMITS.nesting`
 * levels, and `renderAgentMarkdown` refuses text that is too long, too
 * deeply nested or too full of delimiters, saying why, so it can be shown as
 * plain text instead. Invisible characters that change how text reads
 * (U+202E, …) are shown as marks: overrides and embeddings in all text,
 * every bidi control and invisible character in code and file mentions.
 * URLs are not made links where they sit inside HTML the agent wrote (which
 * is shown as text).
 */
/** Agent text: markdown as agents write it. A person's message keeps its line breaks (`breaks`). */
const agentMarkdown = configure(new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false, maxNesting: LIMITS.nesting }))
const userMarkdown = configure(new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false, maxNesting: LIMITS.nesting }))

/** What the renderer keeps while it renders one text: how deep it is inside file mentions (whose text is a path). */
interface RenderEnv extends Env {
  inFile?: number
}
const inFile = (env: Env | undefined): number => Number((env as RenderEnv | undefined)?.inFile ?? 0)

function configure(markdown: MarkdownRenderer): MarkdownRenderer {
  const defaultValidateLink = markdown.validateLink.bind(markdown)
  /** `file:` links are mentions of files (never navigated to: they render as a chip); everything else as markdown-it decides. */
  markdown.validateLink = (url: string) => /^file:\/\//i.test(url.trim()) || defaultValidateLink(url)

  const renderToken = markdown.renderer.renderToken.bind(markdown.renderer)

  const e = markdown.utils.escapeHtml

  /** Text: escaped, with the invisible characters that change how it reads shown (all of them inside a file mention). */
  markdown.renderer.rules.text = (tokens, index, _options, env) => markHiddenHtml(e(tokens[index].content), inFile(env) ? 'path' : 'text')
  /** Code shows every invisible character: a bidi control in code can make it read unlike what runs. */
  markdown.renderer.rules.code_inline = (tokens, index, _options, _env, self) =>
    `<code${self.renderAttrs(tokens[index])}>${markHiddenHtml(e(tokens[index].content), 'path')}</code>`
  markdown.renderer.rules.code_block = (tokens, index) => codeBlock(tokens[index].content, '')

  markdown.renderer.rules.fence = (tokens, index) => {
    const token = tokens[index]
    return codeBlock(token.content, token.info.trim().split(/\s+/)[0] ?? '')
  }

  function codeBlock(content: string, lang: string): string {
    const { html, language } = highlightCode(content, lang)
    const label = e(language ?? (revealText(lang.slice(0, 30), 'path') || 'text'))
    return (
      '<div class="code-block">' +
      `<div class="code-head"><span class="code-lang">${label}</span>` +
      '<span class="code-copy" role="button" tabindex="0" title="Copy the code" aria-label="Copy the code">Copy</span></div>' +
      // A long line scrolls the block sideways: it takes the focus so the keyboard can scroll it too.
      `<pre tabindex="0"><code class="hljs${language ? ` language-${e(language)}` : ''}">${markHiddenHtml(html, 'path')}</code></pre>` +
      '</div>\n'
    )
  }

  markdown.renderer.rules.link_open = (tokens, index, options, env, self) => {
    const token = tokens[index]
    const href = String(token.attrGet('href') ?? '')
    if (/^file:\/\//i.test(href)) {
      token.meta = { ...(token.meta ?? {}), file: true }
      if (env) env.inFile = inFile(env) + 1
      return fileChipOpen(filePath(href))
    }
    const title = token.attrGet('title')
    if (title) token.attrSet('title', revealText(String(title)))
    return self.renderToken(tokens, index, options)
  }

  markdown.renderer.rules.link_close = (tokens, index, options, env, self) => {
    // The matching opener is the nearest link_open at the same nesting level before this token.
    for (let i = index - 1; i >= 0; i--) {
      if (tokens[i].type === 'link_open' && tokens[i].level === tokens[index].level) {
        if ((tokens[i].meta as { file?: boolean } | null)?.file) {
          if (env) env.inFile = Math.max(0, inFile(env) - 1)
          return '</span>'
        }
        break
      }
    }
    return self.renderToken(tokens, index, options)
  }

  /** A mention of a file: a chip that shows the path (never navigates); a path with hidden characters shows them, and says so. */
  function fileChipOpen(path: string): string {
    const warning = hiddenWarning(path, 'path')
    const title = revealPath(path) + (warning ? ` — ${warning}` : '')
    return `<span class="file-link${warning ? ' hidden-chars' : ''}" role="link" tabindex="0" data-path="${e(path)}" title="${e(title)}">`
  }

  markdown.core.ruler.after('linkify', 'unlink_markup', unlinkMarkup)

  /** Only embedded images are shown; a remote image would be a request to a server the agent chose (and the CSP refuses it): it becomes a link. */
  markdown.renderer.rules.image = (tokens, index, options, env, self) => {
    const token = tokens[index]
    const src = String(token.attrGet('src') ?? '')
    const alt = self.renderInlineAsText(token.children ?? [], options, env)
    if (/^data:image\/(gif|png|jpeg|webp);/i.test(src)) {
      token.attrSet('alt', revealText(alt))
      return renderToken(tokens, index, options)
    }
    if (/^file:\/\//i.test(src)) return `${fileChipOpen(filePath(src))}${markHiddenHtml(e(alt || filePath(src)), 'path')}</span>`
    return `<a href="${e(src)}">${markHiddenHtml(e(alt || 'image'), 'text')}</a>`
  }

  return markdown
}

/** The path a `file:` URL names; a host other than this machine is kept (`file://server/share/x` is `//server/share/x`). */
export function filePath(uri: string): string {
  try {
    const url = new URL(uri)
    const path = decodeURIComponent(url.pathname)
    return url.hostname && url.hostname !== 'localhost' ? `//${url.host}${path}` : path
  } catch {
    return uri.replace(/^file:\/\//i, '')
  }
}

/**
 * Undoes linkify where a URL sits in HTML the agent wrote: with raw HTML off
 * that HTML is shown as text, and `<a href="https://…">` or
 * `<b>https://…</b>` shown as written must not hold a live link. A URL
 * inside a tag (`<a href="…`), right after an opening tag or right before a
 * closing one stays text. Links the agent wrote in markdown (`[x](…)`,
 * `<https://…>`) are not linkify's and are kept.
 */
function unlinkMarkup(state: { tokens: Token[] }): void {
  for (const block of state.tokens) {
    const children = block.type === 'inline' ? block.children : null
    if (!children?.some((t) => t.type === 'link_open' && t.markup === 'linkify')) continue
    const textOf = (t: Token): string | null => (t.type === 'text' || t.type === 'text_special' ? t.content : null)
    const drop = new Set<number>()
    for (let i = 0; i < children.length; i++) {
      if (children[i].type !== 'link_open' || children[i].markup !== 'linkify') continue
      let close = i + 1
      while (close < children.length && children[close].type !== 'link_close') close++
      // The text on either side on the same line (other links' text included).
      let before = ''
      for (let j = i - 1; j >= 0; j--) {
        const text = textOf(children[j])
        if (text !== null) before = text + before
        else if (children[j].type !== 'link_open' && children[j].type !== 'link_close') break
      }
      let after = ''
      for (let j = close + 1; j < children.length; j++) {
        const text = textOf(children[j])
        if (text !== null) after += text
        else if (children[j].type !== 'link_open' && children[j].type !== 'link_close') break
      }
      const insideTag = /<\/?[A-Za-z][^<>]*$/.test(before)
      const afterOpeningTag = /<[A-Za-z][^<>]*>\s*$/.test(before)
      const beforeClosingTag = /^\s*<\/[A-Za-z]/.test(after)
      if (insideTag || afterOpeningTag || beforeClosingTag) drop.add(i).add(close)
    }
    if (drop.size) block.children = children.filter((_, index) => !drop.has(index))
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank')
    node.setAttribute('rel', 'noopener noreferrer')
  }
})

/**
 * Set once: DOMPurify parses a configuration given with a call anew at each call. It gives back the sanitised body
 * (`RETURN_DOM`), whose HTML is what it would have given as a string, so that blocks sanitised together
 * (`sanitizeBlocks`) are read back one by one.
 */
DOMPurify.setConfig({
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style'],
  RETURN_DOM: true
})

/** The sanitised body of `html` (a document of its own, parsed by DOMPurify). */
const purified = (html: string): HTMLElement => DOMPurify.sanitize(html) as unknown as HTMLElement

export function sanitize(html: string): string {
  // As DOMPurify returns a string with no markup: nothing in it to remove.
  if (!html.includes('<')) return html
  return purified(html).innerHTML
}

/**
 * The blocks of a text sanitised in one pass: each in an element of its own, one document parsed for all of them
 * (DOMPurify parses one for each call: in a first open's profile that was ~40 % of the sanitising, a call a block),
 * each block's HTML read back from its element, the same as `sanitize` gives it. Blocks with no markup, or a pass
 * whose elements do not come back one a block, are sanitised one by one.
 */
export function sanitizeBlocks(blocks: readonly string[]): string[] {
  const together = blocks.filter((html) => html.includes('<'))
  if (together.length < 2) return blocks.map(sanitize)
  const body = purified(together.map((html) => `<div>${html}</div>`).join(''))
  const parts = body.children
  if (parts.length !== together.length || body.childNodes.length !== together.length) return blocks.map(sanitize)
  let k = 0
  return blocks.map((html) => (html.includes('<') ? parts[k++].innerHTML : html))
}

/** Sanitised HTML for a whole text (one string). */
export function renderMarkdown(text: string, options: { breaks?: boolean } = {}): string {
  return renderMarkdownBlocks(text, options).join('')
}

/** Sanitised HTML per top-level block of the text, in order (always markdown: see `renderAgentMarkdown` for the bounds). */
export function renderMarkdownBlocks(text: string, options: { breaks?: boolean; parts?: MarkdownParts } = {}): string[] {
  return parseAndRender(text, options.breaks === true, Infinity, options.parts).blocks
}

/** Agent text as markdown, or why it is to be shown as plain text instead. */
export type AgentMarkdown = { blocks: string[]; plain?: undefined } | { plain: string; blocks?: undefined }

/**
 * Agent text as sanitised markdown blocks when that is cheap and complete:
 * not when `markdownVerdict` finds it too long or too full of delimiters,
 * and not when it nests as deep as markdown-it's limit (which would drop
 * what is deeper). `anyway` (the reader asked) skips those checks, up to
 * `LIMITS.markdownAnywayChars`. `parts`: what the last render of this text
 * kept, while it grows (see `MarkdownParts`).
 */
export function renderAgentMarkdown(text: string, options: { breaks?: boolean; anyway?: boolean; parts?: MarkdownParts } = {}): AgentMarkdown {
  if (options.anyway) {
    if (text.length > LIMITS.markdownAnywayChars) return { plain: markdownVerdict(text) ?? 'it is too long' }
    return { blocks: parseAndRender(text, options.breaks === true, Infinity, options.parts).blocks }
  }
  return boundedMarkdown(text, options.breaks === true, options.parts)
}

/** `renderAgentMarkdown` without `anyway`; `clean` sanitises the blocks (given unsanitised, to be sanitised later). */
function boundedMarkdown(text: string, breaks: boolean, parts?: MarkdownParts, clean = cachedSanitize): AgentMarkdown {
  const verdict = markdownVerdict(text)
  if (verdict) return { plain: verdict }
  const { blocks, depth } = parseAndRender(text, breaks, LIMITS.nesting - 1, parts, clean)
  if (depth >= LIMITS.nesting - 1) return { plain: `it is nested more than ${LIMITS.nesting - 2} levels deep` }
  return { blocks }
}

/**
 * Texts about to be shown for the first time (the rows a render puts in the page), rendered together and kept as first
 * shown (`rememberRender`), so each MarkdownBlock showing one finds its render done: each text parsed as
 * `renderAgentMarkdown` does, and the blocks of all of them sanitised in one pass (`sanitizeBlocks`), not one pass a
 * text. DOMPurify parses a document for each pass: a conversation opened at its end drew its ~10 texts in view with a
 * pass each (each ~1 ms quiet, 5–9 ms on the loaded machine). A text already kept, or too long to be kept, is left.
 */
export function renderAhead(texts: readonly { text: string; breaks: boolean }[]): void {
  const fresh = texts.filter(({ text, breaks }) => renderedKey(text, breaks) !== undefined && !renderedBefore(text, breaks))
  if (fresh.length < 2) return
  const raw = fresh.map(({ text, breaks }) => boundedMarkdown(text, breaks, undefined, (blocks) => blocks))
  const clean = cachedSanitize(raw.flatMap((result) => result.blocks ?? []))
  let k = 0
  raw.forEach((result, i) => {
    const blocks = result.blocks?.map(() => clean[k++]).filter((block) => block !== '')
    rememberRender(fresh[i].text, fresh[i].breaks, blocks ? { blocks } : result)
  })
}

/**
 * Recent texts as rendered when first shown (`renderAgentMarkdown` without
 * `anyway`), by text: a row put in the page again (a thread scrolled back and
 * forth) is neither parsed nor sanitised again. Most recently used last,
 * bounded by count and size; a result from before a language's highlighting
 * arrived is not given back.
 */
const rendered = new Map<string, { result: AgentMarkdown; languages: number; chars: number }>()
// A text long enough to be switched to plain text by a slow render (MarkdownBlock) is not kept.
const RENDERED_CACHE = { entries: 600, chars: 3_000_000, entryChars: LIMITS.slowRenderChars }
let renderedChars = 0
/**
 * A text's key among the renders kept, or none for a text too long to be kept: its key, the text with a letter before
 * it, is a copy of the whole text, made in full for each lookup (V8 flattens it; a 5 MB text cost the task that put it
 * in the page 20-80 ms), for a lookup that could not succeed.
 */
const renderedKey = (text: string, breaks: boolean): string | undefined =>
  text.length > RENDERED_CACHE.entryChars ? undefined : (breaks ? 'b' : 'a') + text

/** The remembered render of `text` (see `rememberRender`), if it is still as it would be rendered now. */
export function renderedBefore(text: string, breaks: boolean): AgentMarkdown | undefined {
  const key = renderedKey(text, breaks)
  if (key === undefined) return undefined
  const hit = rendered.get(key)
  if (!hit || hit.languages !== languagesLoaded.value) return undefined
  rendered.delete(key)
  rendered.set(key, hit)
  return hit.result
}

/** Keeps the render of a text as first shown (not the renders of a text growing as it streams). */
export function rememberRender(text: string, breaks: boolean, result: AgentMarkdown): void {
  const key = renderedKey(text, breaks)
  if (key === undefined) return
  const old = rendered.get(key)
  if (old) {
    rendered.delete(key)
    renderedChars -= old.chars
  }
  const chars = key.length + (result.blocks ?? []).reduce((n, html) => n + html.length, 0)
  rendered.set(key, { result, languages: languagesLoaded.value, chars })
  renderedChars += chars
  while (rendered.size > RENDERED_CACHE.entries || renderedChars > RENDERED_CACHE.chars) {
    const [oldest, value] = rendered.entries().next().value as [string, { chars: number }]
    rendered.delete(oldest)
    renderedChars -= value.chars
  }
}

/**
 * A growing text rendered in parts: what one render of it keeps for the
 * next. A top-level block followed by one whose first two lines are whole is
 * settled: text added at the end cannot change it (its HTML is kept), so
 * the next render parses only from the line where the first block not
 * settled starts. Not kept, so the whole text is parsed
 * again, when the text is not the kept text with more at its end, or when it
 * holds what can change blocks before it: a reference definition (`[a]: url`,
 * which links written earlier use) or a line break markdown-it counts but
 * `\n` does not mark (`\r`, or a NUL it replaces). The result is the same as
 * rendering the whole text at once (test/component/markdown.test.ts checks it
 * at every length of many texts).
 */
export interface MarkdownParts {
  /** The settled text, up to the start of the line where its last block starts. */
  settled: string
  /** Its blocks' sanitised HTML. */
  blocks: string[]
  /** The deepest nesting in them. */
  depth: number
  breaks: boolean
  /** The length of the text the last render was of (0 before the first): a text longer since is streaming. */
  shown: number
}

/** An empty `MarkdownParts` for a text about to be rendered (one per text being shown). */
export function markdownParts(): MarkdownParts {
  return { settled: '', blocks: [], depth: 0, breaks: false, shown: 0 }
}

function partsFit(parts: MarkdownParts | undefined, text: string, breaks: boolean): parts is MarkdownParts {
  return !!parts && parts.settled.length > 0 && parts.breaks === breaks && text.length >= parts.settled.length && text.startsWith(parts.settled)
}

/** Whether text holds anything that can change a block before it (see `MarkdownParts`). */
function reachesBack(text: string): boolean {
  return text.includes(']:') || text.includes('\r') || text.includes('\0')
}

/**
 * The text's blocks as sanitised HTML, and how deep it nests; none rendered
 * when it nests `tooDeep` levels or more (it will be shown as plain text).
 * With `parts`, only what follows the settled part is parsed, and `parts`
 * is brought up to date.
 */
function parseAndRender(
  text: string,
  breaks: boolean,
  tooDeep = Infinity,
  parts?: MarkdownParts,
  clean = cachedSanitize
): { blocks: string[]; depth: number } {
  const markdown = breaks ? userMarkdown : agentMarkdown
  const env: RenderEnv = {}
  // reachesBack scans the whole text: at most once a render, and only when asked.
  let back: boolean | undefined
  const textReachesBack = (): boolean => (back ??= reachesBack(text))
  const reuse = partsFit(parts, text, breaks) && !textReachesBack()
  const offset = reuse ? parts.settled.length : 0
  const source = reuse ? text.slice(offset) : text
  const tokens = markdown.parse(source, env)
  let depth = reuse ? parts.depth : 0
  for (const token of tokens) if (token.level > depth) depth = token.level
  if (depth >= tooDeep) {
    if (parts) Object.assign(parts, markdownParts())
    return { blocks: [], depth }
  }
  // Top-level blocks: a level-0 token that closes (or is) a block ends one.
  const groups: [number, number][] = []
  let start = 0
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].level !== 0 || tokens[i].nesting === 1) continue
    groups.push([start, i + 1])
    start = i + 1
  }
  if (start < tokens.length) groups.push([start, tokens.length])
  // A text that grew since its last render is streaming: its last block will be another at the next render, so it is
  // sanitised but not kept among the blocks sanitised before (`cachedSanitize`).
  const growing = parts !== undefined && parts.shown > 0 && text.length > parts.shown
  const html = clean(
    groups.map(([from, to]) => markdown.renderer.render(tokens.slice(from, to), markdown.options, env)),
    growing
  )
  const blocks = (reuse ? parts.blocks.concat(html) : html).filter((block) => block !== '')
  if (parts) {
    // The blocks before the last one whose first line and the line after it are whole are settled: a line still
    // being written can read as another block than it will (`2` before `2. b` continues a list; `|---|x` is no
    // table's delimiter row), and a block's first two lines decide where the block before it ends.
    const lastBreak = source.lastIndexOf('\n')
    const secondLastBreak = lastBreak > 0 ? source.lastIndexOf('\n', lastBreak - 1) : -1
    let k = groups.length - 1
    let at = -1
    for (; k >= 1; k--) {
      const line = tokens[groups[k][0]].map?.[0]
      at = line === undefined ? -1 : lineStart(source, line)
      if (at > 0 && at <= secondLastBreak) break
    }
    if (k >= 1 && !textReachesBack()) {
      let settledDepth = reuse ? parts.depth : 0
      for (let i = 0; i < groups[k][0]; i++) if (tokens[i].level > settledDepth) settledDepth = tokens[i].level
      parts.settled = text.slice(0, offset + at)
      parts.blocks = (reuse ? parts.blocks : []).concat(html.slice(0, k)).filter((block) => block !== '')
      parts.depth = settledDepth
      parts.breaks = breaks
    } else if (!reuse) Object.assign(parts, markdownParts())
    parts.shown = text.length
  }
  return { blocks, depth }
}

/** Where line `line` (0 for the first) of `text` starts, or -1 when it has fewer lines. */
function lineStart(text: string, line: number): number {
  let at = 0
  for (let n = 0; n < line; n++) {
    at = text.indexOf('\n', at) + 1
    if (at === 0) return -1
  }
  return at
}

/**
 * Sanitised blocks by their HTML, most recently used last: while a message
 * streams, the blocks before its last are found here. Bounded by count and by
 * size (a big one is not kept). A streaming message's last block is a new key
 * at each render and is not kept (`streaming`): kept, four panes streaming
 * filled the bound (4,000,000 characters) with versions of their growing
 * blocks no render would ask for again, live in the page's heap for the
 * whole stream and pushing out the blocks of the rest of the thread
 * (docs/BENCHMARKS.md, item 12).
 */
const sanitized = new Map<string, string>()
const SANITIZED_CACHE = { entries: 2000, chars: 4_000_000, entryChars: 200_000 }
let sanitizedChars = 0

/** The blocks' sanitised HTML: those kept from before, the rest sanitised together (`sanitizeBlocks`) and kept. */
function cachedSanitize(blocks: string[], streaming = false): string[] {
  const looked = streaming ? blocks.length - 1 : blocks.length
  const clean = blocks.map((html, i) => {
    if (i >= looked) return undefined
    const hit = sanitized.get(html)
    if (hit === undefined) return undefined
    sanitized.delete(html)
    sanitized.set(html, hit)
    return hit
  })
  const missing = blocks.filter((_, i) => clean[i] === undefined)
  if (!missing.length) return clean as string[]
  const fresh = sanitizeBlocks(missing)
  let k = 0
  return blocks.map((html, i) => clean[i] ?? (i >= looked ? fresh[k++] : keep(html, fresh[k++])))
}

function keep(html: string, clean: string): string {
  if (html.length > SANITIZED_CACHE.entryChars || sanitized.has(html)) return clean
  sanitized.set(html, clean)
  sanitizedChars += html.length + clean.length
  while (sanitized.size > SANITIZED_CACHE.entries || sanitizedChars > SANITIZED_CACHE.chars) {
    const [oldest, value] = sanitized.entries().next().value as [string, string]
    sanitized.delete(oldest)
    sanitizedChars -= oldest.length + value.length
  }
  return clean
}

/**
 * A text in the shapes agents write (a paragraph with emphasis, inline code and a link, a list, a quote, a code
 * block with no language: one would fetch its highlighting), rendered and sanitised once and thrown away, for
 * `warmUp` (components/thread/warm-up.ts): the first render a window makes compiles markdown-it's and DOMPurify's
 * code, a cost the first conversation opened paid in its first frame (markdown-it's parse of its ~6 short texts 12 ms
 * of its 18 in a profile). Nothing is kept: neither cache holds it.
 */
export function warmMarkdown(): void {
  const text = 'A **warm** _up_ with `code`, a [link](https://example.com) and a path.\n\n- one\n- two\n\n> quoted\n\n```\nconst x = 1\n```\n'
  for (const breaks of [false, true]) parseAndRender(text, breaks, Infinity, undefined, sanitizeBlocks)
}
