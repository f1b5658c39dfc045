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

/**
 * Runs `switchboard ARGS` on a terminal of its own (util-linux's `script` makes the pseudo-terminal), answering
 * each question it asks there with the next of `answers` once `asked` matches what it printed. Everything the
 * command writes comes back in `output` (a terminal has one stream).
 */
export function runCliOnTerminal(
  args: string[],
  options: { env: Record<string, string>; asked: RegExp; answers: string[] }
): Promise<{ code: number | null; output: string }> {
  const quoted = [process.execPath, CLI, ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ')
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', quoted, '/dev/null'], { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    let answered = 0
    child.stdout.on('data', (data: Buffer) => {
      output += data.toString()
      const asked = output.match(new RegExp(options.asked.source, 'g'))?.length ?? 0
      while (answered < asked && answered < options.answers.length) child.stdin.write(`${options.answers[answered++]}\r`)
    })
    child.stderr.on('data', (data: Buffer) => (output += data.toString()))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, output }))
  })
}
