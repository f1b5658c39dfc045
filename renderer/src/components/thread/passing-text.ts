/**
 * A text as it shows while its row passes by in a fling (MarkdownBlock): no
 * markdown parsed, nothing sanitised (it is shown as text), but shaped like its
 * markdown so the frame it is seen in looks like the row at rest: its
 * paragraphs apart, its fenced code as code blocks (with their language), a
 * list item's marker as a bullet. Everything else (emphasis, inline code,
 * links) shows as written.
 */
export interface PassingPart {
  code: boolean
  text: string
  /** A code block's language as written after the fence ('text' when none). */
  lang: string
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/

export function passingParts(text: string): PassingPart[] {
  const parts: PassingPart[] = []
  let lines: string[] = []
  let fence: { marker: string; lang: string } | null = null
  const prose = (): void => {
    // Paragraphs are apart where a blank line parts them.
    for (const paragraph of lines.join('\n').split(/\n[ \t]*\n/)) {
      if (paragraph.trim()) parts.push({ code: false, text: paragraph.replace(/^\n+|\s+$/g, '').replace(/^( *)[-*+] /gm, '$1• '), lang: '' })
    }
    lines = []
  }
  for (const line of text.split('\n')) {
    const match = FENCE.exec(line)
    if (!fence && match) {
      prose()
      fence = { marker: match[1], lang: match[2] || 'text' }
    } else if (fence && match && match[1][0] === fence.marker[0] && match[1].length >= fence.marker.length && !match[2]) {
      parts.push({ code: true, text: lines.join('\n'), lang: fence.lang })
      lines = []
      fence = null
    } else lines.push(line)
  }
  if (fence) parts.push({ code: true, text: lines.join('\n'), lang: fence.lang })
  else prose()
  return parts
}
