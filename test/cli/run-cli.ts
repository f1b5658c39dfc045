import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The built command (out/main/cli.js, `npx electron-vite build` first), run as a user runs it. */
const CLI = join(fileURLToPath(import.meta.url), '..', '..', '..', 'out', 'main', 'cli.js')

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `switchboard ARGS` to its end; `stdin`: what is piped in (else nothing: stdin is not a terminal); `onStderr`: all of stderr so far, as it grows. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; cwd?: string; onStderr?: (stderr: string) => void } = {}
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()))
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString()
      options.onStderr?.(stderr)
    })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.stdin ?? '')
  })
}

/** The JSON lines of `--json` output. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}
