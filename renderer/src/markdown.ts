import MarkdownIt from 'markdown-it'
import DOMPurify from 'dompurify'

/**
 * Agent text is untrusted: it becomes HTML only through markdown-it with raw
 * HTML disabled, and that HTML passes DOMPurify before it reaches the DOM.
 * markdown-it's own link check already refuses javascript: and similar URLs;
 * DOMPurify is the second wall. Links open outside the window (the Electron
 * shell sends them to the system browser).
 */
const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false })

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank')
    node.setAttribute('rel', 'noopener noreferrer')
  }
})

export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(markdown.render(text), {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style']
  })
}
