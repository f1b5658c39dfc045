import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * Electronegativity (the Electron security linter) over the shell's sources
 * (electron/, TypeScript) and the build (out/: main, preload and the renderer
 * bundle), offline (scripts/electronegativity.cjs). Any high-severity finding
 * fails; so does a medium one that is not in EXPLAINED below, keyed by check
 * and file and counted. Each explained one is also explained in
 * docs/ARCHITECTURE.md ("Security"), and an entry nothing matches any more
 * must go from both.
 */

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const run = promisify(execFile)

interface Finding {
  check: string
  file: string
  line: number
  severity: 'HIGH' | 'MEDIUM' | 'LOW' | 'INFORMATIONAL'
  confidence: string
  description: string
  sample?: string
}

interface Scan {
  input: string
  checks: number
  errors: { file: string; message: string; tolerable: boolean }[]
  findings: Finding[]
}

interface Report {
  tool: string
  electronVersion: string
  refused: string[]
  scans: Scan[]
}

/** The medium findings we know and accept, by `CHECK folder/file` (hashes in chunk names as [hash]), with how many. */
const EXPLAINED: Record<string, { count: number; why: string }> = {
  'CSP_GLOBAL_CHECK electron/': {
    count: 1,
    why: 'electron/ holds no page: the CSP is the meta tag of renderer/index.html (found in the out/ scan) and the app scheme header, which the tool cannot read'
  },
  'PRELOAD_JS_CHECK electron/main.ts': { count: 1, why: 'the preload exposes only request/onEvents through contextBridge, sandboxed' },
  'PRELOAD_JS_CHECK out/main/index.js': { count: 1, why: 'the same preload, built' },
  'OPEN_EXTERNAL_JS_CHECK electron/main.ts': { count: 1, why: 'openInBrowser: only plain http(s) URLs without credentials (opensInBrowser)' },
  'OPEN_EXTERNAL_JS_CHECK out/main/index.js': { count: 1, why: 'the same openInBrowser, built' },
  'PROTOCOL_HANDLER_JS_CHECK electron/links.ts': {
    count: 1,
    why: 'switchboard:// (packaged builds only): a link is read as text into a session id or a project path and only navigates; it never prompts or changes a setting, a malformed one is ignored with a log line'
  },
  'PROTOCOL_HANDLER_JS_CHECK out/main/index.js': { count: 1, why: 'the same link scheme, built' },
  'CUSTOM_ARGUMENTS_JS_CHECK electron/main.ts': {
    count: 1,
    why: "js-flags: the constant RENDERER_JS_FLAGS (--initial-old-space-size=8 --heap-growing-percent=10, the window's V8 memory settings), nothing from outside"
  },
  'CUSTOM_ARGUMENTS_JS_CHECK out/main/index.js': { count: 1, why: 'the same switch, built' }
}

function keyOf(scan: Scan, finding: Finding): string {
  const file = finding.file === 'N/A' ? '' : finding.file.replace(/\\/g, '/').replace(/-[A-Za-z0-9_-]{8}\.(js|css)$/, '-[hash].$1')
  return `${finding.check} ${scan.input}/${file}`
}

/** What fails the test: high findings, medium ones not explained (or more of them than explained), and explained ones no longer found. */
function judge(scans: Scan[], explained: typeof EXPLAINED) {
  const high = scans.flatMap((scan) => scan.findings.filter((f) => f.severity === 'HIGH').map((f) => `${keyOf(scan, f)}:${f.line} ${f.description}`))
  const counts = new Map<string, number>()
  const lines = new Map<string, string[]>()
  for (const scan of scans) {
    for (const finding of scan.findings.filter((f) => f.severity === 'MEDIUM')) {
      const key = keyOf(scan, finding)
      counts.set(key, (counts.get(key) ?? 0) + 1)
      lines.set(key, [...(lines.get(key) ?? []), `line ${finding.line}: ${finding.description}`])
    }
  }
  const unexplained = [...counts]
    .filter(([key, count]) => count > (explained[key]?.count ?? 0))
    .map(([key, count]) => `${key} (${count} found, ${explained[key]?.count ?? 0} explained): ${(lines.get(key) ?? []).join('; ')}`)
  const stale = Object.keys(explained).filter((key) => !counts.has(key))
  return { high, unexplained, stale }
}

async function scan(...inputs: string[]): Promise<Report> {
  const { stdout } = await run(process.execPath, [join(repo, 'scripts', 'electronegativity.cjs'), ...inputs], {
    cwd: repo,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 600_000
  })
  return JSON.parse(stdout) as Report
}

describe('Electronegativity on the shell and the build', () => {
  let report: Report

  beforeAll(async () => {
    if (!existsSync(join(repo, 'out', 'main', 'index.js')) || !existsSync(join(repo, 'out', 'renderer', 'index.html'))) {
      throw new Error("No build in out/: run 'npx electron-vite build' first (npm test does)")
    }
    report = await scan('electron', 'out')
  }, 600_000)

  it('runs offline: the one fetch it tries (translations) is refused, and no socket is opened', () => {
    expect(
      report.refused.every((what) => /^got https:\/\/electronegativity-i18n\./.test(what)),
      report.refused.join('\n')
    ).toBe(true)
  })

  it('reads every file it scans (TypeScript and the built ES modules) and runs its checks', () => {
    expect(report.scans.map((s) => s.input)).toEqual(['electron', 'out'])
    for (const s of report.scans) {
      expect(s.checks, s.input).toBeGreaterThanOrEqual(30)
      expect(
        s.errors.filter((e) => !e.tolerable),
        s.input
      ).toEqual([])
    }
  })

  it('finds nothing of high severity, and no medium finding that is not explained', () => {
    const verdict = judge(report.scans, EXPLAINED)
    expect(verdict.high, 'high-severity findings').toEqual([])
    expect(verdict.unexplained, 'medium findings to fix, or to explain here and in docs/ARCHITECTURE.md').toEqual([])
    expect(verdict.stale, 'explained findings no longer found: remove them here and in docs/ARCHITECTURE.md').toEqual([])
  })

  it('has every explained finding explained in docs/ARCHITECTURE.md', () => {
    const doc = readFileSync(join(repo, 'docs', 'ARCHITECTURE.md'), 'utf8')
    for (const key of Object.keys(EXPLAINED)) {
      const check = key.split(' ')[0]
      expect(doc, key).toContain(check)
    }
  })
})

describe('the scan itself', () => {
  let fixture: string

  beforeAll(async () => {
    fixture = await mkdtemp(join(tmpdir(), 'switchboard-electronegativity-'))
    await mkdir(join(fixture, 'src'))
    // TypeScript as ours is written (types, `satisfies`, `as const`, optional chaining), with the settings the tool exists to catch.
    await writeFile(
      join(fixture, 'src', 'main.ts'),
      [
        "import { app, BrowserWindow } from 'electron'",
        'interface Size { width: number; height: number }',
        'const size = { width: 800, height: 600 } satisfies Size',
        "const page = process.env.PAGE ?? ('index.html' as const)",
        'void app.whenReady().then((): void => {',
        '  const window = new BrowserWindow({',
        '    width: size.width,',
        '    webPreferences: { nodeIntegration: true, contextIsolation: false, preload: `${__dirname}/preload.js` }',
        '  })',
        '  void window?.loadFile(page)',
        '})',
        ''
      ].join('\n')
    )
  })

  afterAll(async () => {
    await rm(fixture, { recursive: true, force: true })
  })

  it('parses TypeScript, reports high findings and an unexplained medium one: the test above can fail', async () => {
    const report = await scan(fixture)
    expect(report.scans[0].errors.filter((e) => !e.tolerable)).toEqual([])
    const verdict = judge(report.scans, EXPLAINED)
    // contextIsolation: false in the .ts file, and no navigation limits anywhere.
    expect(verdict.high.join('\n')).toMatch(/CONTEXT_ISOLATION_JS_CHECK \S+\/src\/main\.ts:8/)
    expect(verdict.high.join('\n')).toMatch(/LIMIT_NAVIGATION_GLOBAL_CHECK/)
    // No sandbox: true, and a preload nobody explained.
    expect(verdict.unexplained.join('\n')).toMatch(/SANDBOX_JS_CHECK \S+\/src\/main\.ts/)
    expect(verdict.unexplained.join('\n')).toMatch(/PRELOAD_JS_CHECK \S+\/src\/main\.ts/)
    expect(verdict.stale.length).toBe(Object.keys(EXPLAINED).length)
  }, 600_000)
})
