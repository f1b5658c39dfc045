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
  return [
    ...text.matchAll(/(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g)
  ].map((m) => m[1] ?? m[2] ?? m[3])
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
    expect([...offenders('electron/host', isElectron), ...offenders('shared', isElectron), ...offenders('renderer', isElectron)]).toEqual([])
  })

  it('keeps Node and Vue out of shared/, and Node out of the renderer', () => {
    expect([...offenders('shared', (s) => isNode(s) || s === 'vue' || s === 'pinia'), ...offenders('renderer', isNode)]).toEqual([])
  })
})

/** The repository's config without type information (and the rules that need it). */
const untyped: import('eslint').Linter.Config[] = [
  {
    files: ['**/*.ts', '**/*.vue'],
    languageOptions: { parserOptions: { project: null, projectService: false } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-misused-promises': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off'
    }
  }
]

describe('the linter keeps the layers and refuses circles', () => {
  /** What ESLint (with this repository's config) says of `code` as if it were the file at `path`. */
  // The rules asked about here need no type information: without it no TypeScript program is built (tens of seconds
  // here), so the rules that need one are off.
  let linter: Promise<import('eslint').ESLint> | undefined
  async function rulesBroken(path: string, code: string): Promise<string[]> {
    linter ??= import('eslint').then(({ ESLint }) => new ESLint({ cwd: repo, overrideConfig: untyped }))
    const eslint = await linter
    const [result] = await eslint.lintText(code, { filePath: join(repo, path) })
    return result.messages.map((m) => m.ruleId ?? m.message)
  }

  it('refuses a relative import from the renderer into the Host, Node in shared/, and Electron in the Host', async () => {
    expect(await rulesBroken('renderer/src/time.ts', "import { Host } from '../../electron/host/host'\nexport const host = Host\n")).toContain(
      'no-restricted-imports'
    )
    expect(await rulesBroken('shared/search.ts', "import { readFileSync } from 'node:fs'\nexport const read = readFileSync\n")).toContain(
      'no-restricted-imports'
    )
    expect(await rulesBroken('electron/host/web/version.ts', "import { app } from 'electron'\nexport const version = app\n")).toContain(
      'no-restricted-imports'
    )
  }, 240_000)

  it('refuses an import that closes a circle (the view store importing the sessions store, which imports it)', async () => {
    expect(
      await rulesBroken('renderer/src/stores/view.ts', "import { useSessionsStore } from './sessions'\nexport const sessions = useSessionsStore\n")
    ).toContain('import-x/no-cycle')
  }, 240_000)
})
