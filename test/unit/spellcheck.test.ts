import { describe, expect, it } from 'vitest'
import { configureSpellcheck, NO_DICTIONARY_DOWNLOADS, spellcheckOn } from '../../electron/spellcheck'

/**
 * Spellcheck never downloads a dictionary: the system's spellchecker on macOS
 * (Electron fetches nothing there), off on Windows and Linux, where Electron's
 * Hunspell would fetch dictionaries from Google's CDN, with the download
 * address pointed at nothing. A stand-in for Electron's session records what
 * main.ts asks of it.
 */

function standIn() {
  const calls: string[] = []
  return {
    calls,
    session: {
      setSpellCheckerEnabled: (on: boolean) => void calls.push(`enabled ${on}`),
      setSpellCheckerDictionaryDownloadURL: (url: string) => void calls.push(`download ${url}`)
    }
  }
}

describe('spellcheck', () => {
  it('is off on Windows and Linux, and no dictionary can come from anywhere but a dead loopback port', () => {
    for (const platform of ['linux', 'win32', 'freebsd'] as const) {
      const { calls, session } = standIn()
      configureSpellcheck(session, platform)
      expect(calls, platform).toEqual([`download ${NO_DICTIONARY_DOWNLOADS}`, 'enabled false'])
      expect(new URL(NO_DICTIONARY_DOWNLOADS).hostname).toBe('127.0.0.1')
      expect(spellcheckOn(platform)).toBe(false)
    }
  })

  it("is the system's own on macOS, left as Electron has it (which downloads nothing there)", () => {
    const { calls, session } = standIn()
    configureSpellcheck(session, 'darwin')
    expect(calls).toEqual([])
    expect(spellcheckOn('darwin')).toBe(true)
  })
})
