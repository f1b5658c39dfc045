/** How long the Clipboard API may take to write before the copy command is tried instead. */
const WRITE_WAIT_MS = 2000

/**
 * Copies text to the clipboard: the async Clipboard API where the window may
 * use it, else a selected hidden field and the copy command (the Electron
 * shell denies web permissions, and a plain http page has no Clipboard API).
 * Resolves false when neither worked.
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      // A write the browser leaves unanswered (a busy or unfocused window) falls back too: the user is never left
      // without an answer.
      let late: ReturnType<typeof setTimeout> | undefined
      const unanswered = new Promise<never>((_, reject) => (late = setTimeout(() => reject(new Error('no answer')), WRITE_WAIT_MS)))
      try {
        await Promise.race([navigator.clipboard.writeText(text), unanswered])
      } finally {
        clearTimeout(late)
      }
      return true
    }
  } catch {
    // fall through to the copy command
  }
  const field = document.createElement('textarea')
  field.value = text
  field.setAttribute('readonly', '')
  field.className = 'visually-hidden'
  document.body.appendChild(field)
  const focused = document.activeElement as HTMLElement | null
  field.select()
  let copied = false
  try {
    copied = document.execCommand('copy')
  } catch {
    copied = false
  }
  field.remove()
  focused?.focus?.()
  return copied
}
