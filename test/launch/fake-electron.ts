import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import yazl from 'yazl'

/**
 * A stand-in for Electron's binary: a shell script that writes the folder it was started in and
 * its arguments, one a line, to launched.txt beside itself, and exits 0.
 */
export const FAKE_ELECTRON = `#!/bin/sh
printf '%s\\n' "$PWD" "$@" > "$(dirname "$0")/launched.txt"
`

/** A zip shaped like Electron's release for Linux: the executable and the version file at its root. */
export async function fakeElectronZip(version: string): Promise<Buffer> {
  const zip = new yazl.ZipFile()
  zip.addBuffer(Buffer.from(FAKE_ELECTRON), 'electron', { mode: 0o100755 })
  zip.addBuffer(Buffer.from(version), 'version', { mode: 0o100644 })
  zip.end()
  const chunks: Buffer[] = []
  for await (const chunk of zip.outputStream) chunks.push(Buffer.from(chunk as Uint8Array))
  return Buffer.concat(chunks)
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

export interface Mirror {
  /** The base URL to give as ELECTRON_MIRROR (ends with a slash). */
  url: string
  /** The paths asked for, in order. */
  requests: string[]
  close(): Promise<void>
}

/** Serves `files` (path → content) on 127.0.0.1; anything else is a 404. */
export async function startMirror(files: Map<string, Buffer>): Promise<Mirror> {
  const requests: string[] = []
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://mirror').pathname
    requests.push(path)
    const body = files.get(path)
    if (!body) {
      res.writeHead(404, 'Not Found', { 'content-type': 'text/plain' }).end('not here')
      return
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** A loopback address where nothing listens: a port just given up by a server. */
export async function deadAddress(): Promise<string> {
  const mirror = await startMirror(new Map())
  await mirror.close()
  return mirror.url
}

export interface Run {
  code: number | null
  stdout: string
  stderr: string
  /** Both, interleaved as they came. */
  output: string
  seconds: number
}

/** Runs a command to its end and keeps what it printed. */
export function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => ((stdout += chunk), (output += chunk)))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => ((stderr += chunk), (output += chunk)))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr, output, seconds: (Date.now() - started) / 1000 }))
  })
}
