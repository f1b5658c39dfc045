import type { Session } from 'electron'

/**
 * Spellcheck that never downloads anything. On macOS Electron checks with the
 * system's own spellchecker and fetches nothing. On Windows and Linux it checks
 * with Hunspell dictionaries it downloads from Google's CDN on first use (a
 * request to Google from every install, naming the user's language): there,
 * spellcheck is off, and the download address points nowhere in case anything
 * turns it back on. Electron-free (a `Session` stand-in), so it is unit-tested.
 */

/** Whether the window checks spelling: only where the system's own spellchecker does it. */
export function spellcheckOn(platform: NodeJS.Platform): boolean {
  return platform === 'darwin'
}

/** Nothing listens on port 9 (discard) of loopback: a dictionary asked for there is never fetched. */
export const NO_DICTIONARY_DOWNLOADS = 'http://127.0.0.1:9/'

export function configureSpellcheck(
  session: Pick<Session, 'setSpellCheckerEnabled' | 'setSpellCheckerDictionaryDownloadURL'>,
  platform: NodeJS.Platform
): void {
  if (spellcheckOn(platform)) return
  session.setSpellCheckerDictionaryDownloadURL(NO_DICTIONARY_DOWNLOADS)
  session.setSpellCheckerEnabled(false)
}
