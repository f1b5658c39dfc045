/**
 * Copies text to the clipboard: the async Clipboard API where the window may
 * use it, else a selected hidden field and the copy command (the Electron
 * shell denies web permissions, and a plain http page has no Clipboard API).
 * Resolves false when neither worked.
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text)
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
