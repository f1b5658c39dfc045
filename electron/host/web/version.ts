import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The app's version from package.json, found by walking up from this file (source or bundle). */
export function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'switchboard' && pkg.version) return pkg.version
    } catch {
      // keep walking up
    }
    dir = dirname(dir)
  }
  return '0.0.0'
}
