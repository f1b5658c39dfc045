/**
 * Saves text the window made as a file: a download in a browser; in the
 * desktop app the shell shows a save dialog for it (electron/main.ts,
 * `will-download`, which lets through only blob: URLs of our own page).
 */
export function downloadText(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  link.click()
  // The download has its copy by then; a dialog left open does not need the URL.
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}
