import MarkdownIt, { type Token } from 'markdown-it'

/**
 * Markdown as the words a reader sees: emphasis, code marks, links, table
 * pipes and heading hashes gone, code and link text kept, blocks and line
 * breaks turned into spaces. Read with markdown-it, the same parser the window
 * renders messages with, so what is stripped is what the window does not show.
 */

const parser = new MarkdownIt({ html: false, linkify: false })

export function plainText(markdown: string): string {
  const parts: string[] = []
  const walk = (tokens: Token[]): void => {
    for (const token of tokens) {
      if (token.children) walk(token.children)
      else if (token.type === 'text' || token.type === 'code_inline') parts.push(token.content)
      else if (token.type === 'fence' || token.type === 'code_block') parts.push(' ', token.content, ' ')
      else if (token.type === 'softbreak' || token.type === 'hardbreak' || (token.block && token.nesting === -1)) parts.push(' ')
    }
  }
  walk(parser.parse(markdown, {}))
  return parts.join('').replace(/\s+/g, ' ').trim()
}
