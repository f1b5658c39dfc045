// @vitest-environment happy-dom
import './happy-dom-fixes'
import { describe, expect, it, vi } from 'vitest'
import DOMPurify from 'dompurify'
import hljs from 'highlight.js/lib/core'
import { HIGHLIGHT_LANGUAGES, LANGUAGE_ALIASES, languagesLoaded, languagesSettled, preloadLanguages } from '../../renderer/src/highlight'
import {
  markdownParts,
  rememberRender,
  renderAgentMarkdown,
  renderedBefore,
  renderMarkdown,
  renderMarkdownBlocks,
  sanitize,
  sanitizeBlocks
} from '../../renderer/src/markdown'
import { LIMITS } from '../../renderer/src/agent-text'
import { passingParts } from '../../renderer/src/components/thread/passing-text'
import { XSS_CORPUS } from '../agent/xss-corpus'

/** A text with a block of each kind. */
const SAMPLE_TEXT = [
  'A paragraph with `code`, **bold**, a [link](https://example.com "its title") and <b>tags</b> shown as text & more.',
  '- one\n- two\n  1. nested',
  '```ts\nconst x = 1 < 2\n```',
  '| a | b |\n| - | - |\n| 1 | 2 |',
  '> a quote\n\n---',
  'A mention of [file.ts](file:///project/src/file.ts) and an image ![alt](https://example.com/x.png).'
].join('\n\n')

/** What the sanitised HTML holds, parsed as the browser would. */
function parse(html: string): HTMLElement {
  const host = document.createElement('div')
  host.innerHTML = html
  return host
}

function dangerous(root: HTMLElement): string[] {
  const found: string[] = []
  for (const element of root.querySelectorAll('*')) {
    const tag = element.tagName.toLowerCase()
    if (['script', 'iframe', 'object', 'embed', 'style', 'link', 'meta', 'base', 'form', 'input', 'svg', 'math', 'template'].includes(tag))
      found.push(`<${tag}>`)
    for (const attr of element.getAttributeNames()) {
      const value = element.getAttribute(attr) ?? ''
      if (attr.startsWith('on')) found.push(`${tag}[${attr}]`)
      if (attr === 'style') found.push(`${tag}[style]`)
      if (
        ['href', 'src', 'action', 'xlink:href', 'formaction', 'data'].includes(attr) &&
        /^\s*(javascript|vbscript|data):/i.test(value.replace(/[\u0000-\u001f]/g, ''))
      ) {
        found.push(`${tag}[${attr}=${value.slice(0, 20)}]`)
      }
    }
  }
  return found
}

describe('agent markdown', () => {
  it('shows a code block plain at once while its language loads, then highlighted, the same text', async () => {
    const text = '```rust\nfn main() { let x = 1; }\n```'
    const before = languagesLoaded.value
    const plain = parse(renderMarkdown(text)).querySelector('.code-block')!
    expect(plain.querySelector('.code-lang')?.textContent).toBe('rust')
    expect(plain.querySelector('code')?.className).toContain('language-rust')
    expect(plain.querySelector('[class^=hljs-]')).toBeNull()
    expect(plain.querySelector('code')?.textContent).toBe('fn main() { let x = 1; }\n')
    await languagesSettled()
    expect(languagesLoaded.value).toBe(before + 1)
    const highlighted = parse(renderMarkdown(text)).querySelector('.code-block')!
    expect(highlighted.querySelector('.hljs-keyword')?.textContent).toBe('fn')
    expect(highlighted.querySelector('code')?.textContent).toBe('fn main() { let x = 1; }\n')
    // A name highlight.js does not know stays plain, and loads nothing.
    const unknown = parse(renderMarkdown('```brainfuck\n+[-->-[>>+>-----<<]<--<---]>-.\n```')).querySelector('.code-block')!
    expect(unknown.querySelector('.code-lang')?.textContent).toBe('brainfuck')
    await languagesSettled()
    expect(languagesLoaded.value).toBe(before + 1)
  })

  it('knows each language by the aliases it declares before loading it', async () => {
    for (const name of HIGHLIGHT_LANGUAGES) {
      const language = ((await import(`highlight.js/lib/languages/${name}`)) as { default: (api: typeof hljs) => { aliases?: string[] } }).default
      expect([name, language(hljs).aliases ?? []]).toEqual([name, LANGUAGE_ALIASES[name] ?? []])
    }
  })

  it('keeps formatting and turns code fences into highlighted blocks with a copy control', async () => {
    await preloadLanguages('ts')
    const root = parse(renderMarkdown('**bold** and `code`\n\n```ts\nconst x: number = 1\n```'))
    expect(root.querySelector('strong')?.textContent).toBe('bold')
    const block = root.querySelector('.code-block')!
    expect(block.querySelector('.code-lang')?.textContent).toBe('ts')
    expect(block.querySelector('.code-copy')?.getAttribute('role')).toBe('button')
    expect(block.querySelector('code')?.className).toContain('language-ts')
    expect(block.querySelector('.hljs-keyword')?.textContent).toBe('const')
    expect(block.querySelector('code')?.textContent).toBe('const x: number = 1\n')
  })

  it('shows code in an unknown language plainly, escaped', () => {
    const root = parse(renderMarkdown('```klingon\n<b>qapla</b>\n```'))
    expect(root.querySelector('.code-lang')?.textContent).toBe('klingon')
    expect(root.querySelector('code b')).toBeNull()
    expect(root.querySelector('code')?.textContent).toBe('<b>qapla</b>\n')
  })

  it('renders one string per top-level block, so a growing message changes only its end', () => {
    const first = renderMarkdownBlocks('One.\n\n- a\n- b\n\nThree')
    expect(first).toHaveLength(3)
    const grown = renderMarkdownBlocks('One.\n\n- a\n- b\n\nThree and more')
    expect(grown.slice(0, 2)).toEqual(first.slice(0, 2))
    expect(grown[2]).toContain('Three and more')
  })

  it('renders a growing text in parts exactly as the whole text at once, at every length', () => {
    // Texts whose end can change how their earlier lines read, the way markdown-it reads them.
    const texts = [
      'One.\n\n- a\n- b\n\nThree **bold** and `code`.\n\n## Heading\n\nMore text\nover two lines.\n',
      '1. a\n\n2. b\n\n3\n\nafter the list\n\n4. c\n',
      'para\n#notheading\n\n# heading\npara again\n---\n\n***\n\nlast',
      'abc\n| a | b |\n|---|---|x\n\n| c | d |\n|---|---|\n| 1 | 2 |\nrow?\n\nend',
      'Setext\n===\n\nand\n---\n\n> a quote\nlazy line\n\n> another\n\n    indented code\n\n    more code\n\ntext',
      '```js\nconst a = 1\n\nconst b = 2\n```\nafter the fence\n\n~~~\nunclosed fence\n\nstill code',
      '- a\n\n  b in a\n\n -\n- c\n\n* other bullet\n\n+ third\n\n10) ten\n11) eleven\n\nx',
      'See [the docs][d] and [this](https://example.com).\n\nMore.\n\n[d]: https://example.com/docs\n\nEnd.',
      'Windows\r\nlines\r\n\r\nand more\r\n',
      'A file [x](file:///tmp/x.ts), https://example.com linked, <b>https://not.linked</b>.\n\nDone.\n\nReally.'
    ]
    for (const text of texts) {
      for (const step of [1, 7]) {
        const parts = markdownParts()
        for (let end = Math.min(step, text.length); ; end = Math.min(end + step, text.length)) {
          const prefix = text.slice(0, end)
          expect(renderMarkdownBlocks(prefix, { parts }), JSON.stringify(prefix)).toEqual(renderMarkdownBlocks(prefix))
          if (end === text.length) break
        }
        // The parts were used: blocks before the last were kept, not parsed again (unless the text reaches back).
        if (!/\]:|\r/.test(text)) expect(parts.blocks.length, JSON.stringify(text)).toBeGreaterThan(0)
      }
    }
  })

  it('turns file links into mention chips that cannot navigate, and remote images into links', () => {
    const root = parse(renderMarkdown('See [app.ts](file:///home/me/app/src/app.ts) and ![logo](https://example.com/logo.png)'))
    const chip = root.querySelector('.file-link')!
    expect(chip.tagName).toBe('SPAN')
    expect(chip.getAttribute('data-path')).toBe('/home/me/app/src/app.ts')
    expect(chip.textContent).toBe('app.ts')
    expect(root.querySelector('img')).toBeNull()
    const link = root.querySelector('a')!
    expect(link.getAttribute('href')).toBe('https://example.com/logo.png')
    expect(link.getAttribute('target')).toBe('_blank')
    expect(link.getAttribute('rel')).toBe('noopener noreferrer')
  })

  it('shapes a text passing by in a fling like its markdown: paragraphs apart, fenced code as code blocks, bullets', () => {
    const text = 'Turn 7: the plan.\n\n- one `a.ts`\n- two\n\n```ts\nconst a = 1\n\nreturn a\n```\nAfter.\n~~~\nopen to the end'
    expect(passingParts(text)).toEqual([
      { code: false, text: 'Turn 7: the plan.', lang: '' },
      { code: false, text: '• one `a.ts`\n• two', lang: '' },
      { code: true, text: 'const a = 1\n\nreturn a', lang: 'ts' },
      { code: false, text: 'After.', lang: '' },
      { code: true, text: 'open to the end', lang: 'text' }
    ])
  })

  it('keeps the thread’s other messages sanitised while a long reply streams: its growing block’s versions are not kept', () => {
    // Blocks with markup, each sanitised once when first shown (renderMarkdownBlocks: no render is remembered whole).
    const other = ['An *earlier* message with `code`.', '- a **list**\n- of two', '> a `quoted` line'].join('\n\n')
    const shown = renderMarkdownBlocks(other)
    // A reply streaming one long paragraph (as the bench's `chunk N` words), rendered as it grows, 40,000 to 100,000
    // characters: each render's last block is new HTML.
    const reply = Array.from({ length: 20_000 }, (_, i) => `chunk ${i}`).join(' ')
    const parts = markdownParts()
    for (let end = 40_000; end <= 100_000; end += 2_000) {
      const blocks = renderMarkdownBlocks(reply.slice(0, end), { parts })
      expect(blocks).toHaveLength(1)
    }
    // The earlier message drawn again (its row back in view) finds its blocks sanitised: DOMPurify is not asked.
    const purify = vi.spyOn(DOMPurify, 'sanitize')
    try {
      expect(renderMarkdownBlocks(other)).toEqual(shown)
      expect(purify).not.toHaveBeenCalled()
    } finally {
      purify.mockRestore()
    }
  })

  it('gives a text shown again its render as first shown, but not one from before a language’s highlighting arrived', () => {
    const text = 'Shown again: `x`\n\n```ts\nconst a = 1\n```'
    const first = renderAgentMarkdown(text)
    rememberRender(text, false, first)
    expect(renderedBefore(text, false)).toBe(first)
    // A person's message (line breaks kept) is another render of the same text.
    expect(renderedBefore(text, true)).toBeUndefined()
    languagesLoaded.value++
    expect(renderedBefore(text, false)).toBeUndefined()
  })

  it('does not look up a text too long to be remembered (the lookup’s key would copy it whole: 5 MB in the task that shows it)', () => {
    const text = 'lorem ipsum '.repeat(Math.ceil(LIMITS.slowRenderChars / 12) + 1)
    rememberRender(text, false, renderAgentMarkdown(text))
    const get = vi.spyOn(Map.prototype, 'get')
    try {
      expect(renderedBefore(text, false)).toBeUndefined()
      expect(get.mock.calls.filter(([key]) => typeof key === 'string' && key.length > LIMITS.slowRenderChars).length).toBe(0)
    } finally {
      get.mockRestore()
    }
  })

  it('keeps line breaks in a person’s message', () => {
    expect(parse(renderMarkdown('one\ntwo', { breaks: true })).querySelector('br')).not.toBeNull()
    expect(parse(renderMarkdown('one\ntwo')).querySelector('br')).toBeNull()
  })

  it(`leaves nothing that could run from any of the ${XSS_CORPUS.length} hostile payloads`, () => {
    for (const { name, payload } of XSS_CORPUS) {
      for (const breaks of [false, true]) {
        expect({ name, found: dangerous(parse(renderMarkdown(payload, { breaks }))) }).toEqual({ name, found: [] })
      }
    }
    // Sanitised together (a text's blocks in one pass), each comes out as it does alone, the hostile ones too (a block
    // that does not stay in its own element sends the pass back to one block at a time).
    const blocks = [...XSS_CORPUS.map(({ payload }) => payload), ...renderMarkdownBlocks(SAMPLE_TEXT), 'no markup & more', '']
    const together = sanitizeBlocks(blocks)
    expect(together).toEqual(blocks.map(sanitize))
    // A text's own blocks (markdown-it's HTML, unsanitised) stay one an element: sanitised in the one pass.
    const own = SAMPLE_TEXT.split('\n\n').map((part) => renderMarkdownBlocks(part).join(''))
    expect(sanitizeBlocks(own)).toEqual(own.map(sanitize))
    // The detector itself finds what it looks for.
    expect(dangerous(parse('<img src=x onerror="x()"><a href=" javascript:x()">a</a>'))).toEqual(['img[onerror]', 'a[href= javascript:x()]'])
  })
})
