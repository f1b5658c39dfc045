import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/** The folders say which runtime a file may use (docs/ARCHITECTURE.md). */

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.(ts|vue)$/.test(name) ? [path] : []
  })
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (m) => m[1] ?? m[2] ?? m[3]
  )
}

function offenders(folder: string, forbidden: (specifier: string) => boolean): string[] {
  return sources(join(repo, folder)).flatMap((file) =>
    importsOf(file)
      .filter(forbidden)
      .map((specifier) => `${relative(repo, file)} imports ${specifier}`)
  )
}

const isElectron = (s: string) => s === 'electron' || s.startsWith('electron/')
const isNode = (s: string) => s.startsWith('node:') || ['fs', 'path', 'child_process', 'os', 'crypto', 'stream'].includes(s)

describe('layering', () => {
  it('keeps electron out of the Host, shared/ and the renderer', () => {
    expect([
      ...offenders('electron/host', isElectron),
      ...offenders('shared', isElectron),
      ...offenders('renderer', isElectron)
    ]).toEqual([])
  })

  it('keeps Node and Vue out of shared/, and Node out of the renderer', () => {
    expect([
      ...offenders('shared', (s) => isNode(s) || s === 'vue' || s === 'pinia'),
      ...offenders('renderer', isNode)
    ]).toEqual([])
  })
})
