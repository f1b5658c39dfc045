import { promises as fs } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import * as tar from 'tar'
import yazl from 'yazl'
import type { RegistryAgent } from '../../shared/registry'
import { scriptedAgentCommand } from '../agent/spawn'

/**
 * An ACP Registry served on 127.0.0.1 for tests: the feed (changeable, or
 * garbage on demand), icons, binary archives of a small ACP agent (a launcher
 * script for the scripted agent), archives built to escape their folder, a
 * download that is cut half-way, and an npm tarball for an npx distribution.
 */

export interface TarEntry {
  path: string
  type: 'File' | 'Directory' | 'SymbolicLink' | 'Link'
  body?: string
  linkpath?: string
  mode?: number
}

/** A gzipped tar built entry by entry, so a test can write what no honest packer would (`../`, outside links). */
export function tarball(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = []
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '')
    const header = new tar.Header({
      path: entry.path,
      type: entry.type,
      size: entry.type === 'File' ? body.length : 0,
      mode: entry.mode ?? (entry.type === 'Directory' ? 0o755 : 0o644),
      linkpath: entry.linkpath,
      mtime: new Date(0),
      uid: 0,
      gid: 0
    })
    const block = Buffer.alloc(512)
    header.encode(block)
    blocks.push(block)
    if (entry.type === 'File' && body.length) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512))
    }
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

export interface ZipEntry {
  path: string
  body: string
  /** Unix mode, e.g. 0o120777 for a symbolic link (whose body is its target). */
  mode?: number
}

export function zipArchive(entries: ZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile()
  for (const entry of entries) zip.addBuffer(Buffer.from(entry.body), entry.path, { mode: entry.mode ?? 0o100644, mtime: new Date(0) })
  zip.end()
  const chunks: Buffer[] = []
  return new Promise((done, fail) => {
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk))
    zip.outputStream.on('error', fail)
    zip.outputStream.on('end', () => done(Buffer.concat(chunks)))
  })
}

/** A shell script that starts the scripted ACP agent: the "binary" a registry archive carries. */
export function launcherScript(version: string): string {
  const { command, args } = scriptedAgentCommand()
  const quoted = [command, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  return `#!/bin/sh\n# fixture agent ${version}\nSCRIPTED_AGENT_NAME="fixture-agent-${version}" exec ${quoted} "$@"\n`
}

export const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="currentColor"/></svg>'

export class RegistryFixture {
  readonly files = new Map<string, Buffer>()
  agents: RegistryAgent[] = []
  /** Serve this text as the feed instead of the agents (a corrupt feed). */
  feedOverride: string | null = null
  /** Paths whose download is cut after half of the bytes. */
  readonly cut = new Set<string>()
  requests: string[] = []
  /**
   * Paths answered with this many zero bytes, streamed a chunk at a time as the client reads them (no
   * content-length): `sent` counts what the server managed to write before the client stopped reading.
   */
  readonly streams = new Map<string, { bytes: number; sent: number }>()
  private server: Server | null = null
  private port = 0

  get base(): string {
    return `http://127.0.0.1:${this.port}`
  }

  get feedUrl(): string {
    return `${this.base}/registry.json`
  }

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname
      this.requests.push(path)
      if (path === '/registry.json') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(this.feedOverride ?? JSON.stringify({ version: '1.0.0', agents: this.agents }))
        return
      }
      const stream = this.streams.get(path)
      if (stream) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' })
        const chunk = Buffer.alloc(64 * 1024)
        const more = (): void => {
          while (stream.sent < stream.bytes && !res.destroyed) {
            stream.sent += chunk.length
            if (!res.write(chunk)) {
              res.once('drain', more)
              return
            }
          }
          if (!res.destroyed) res.end()
        }
        res.on('error', () => undefined)
        more()
        return
      }
      const file = this.files.get(path)
      if (!file) {
        res.writeHead(404).end('not found')
        return
      }
      res.writeHead(200, { 'content-length': String(file.length), 'content-type': 'application/octet-stream' })
      if (this.cut.has(path)) {
        res.write(file.subarray(0, Math.floor(file.length / 2)), () => res.socket?.destroy())
        return
      }
      res.end(file)
    })
    await new Promise<void>((done) => this.server!.listen(port, '127.0.0.1', done))
    this.port = (this.server!.address() as AddressInfo).port
  }

  async stop(): Promise<void> {
    const server = this.server
    this.server = null
    if (!server) return
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }

  /** A registry entry for the fixture agent at `version`, as a binary archive for `platform` (and an icon). */
  binaryAgent(version: string, platform: string, archivePath = `/dl/fixture-agent-${version}.tar.gz`): RegistryAgent {
    this.files.set(
      `/dl/fixture-agent-${version}.tar.gz`,
      tarball([
        { path: 'fixture/', type: 'Directory' },
        { path: 'fixture/fixture-agent', type: 'File', body: launcherScript(version), mode: 0o644 }
      ])
    )
    this.files.set('/icons/fixture-agent.svg', Buffer.from(ICON))
    return {
      id: 'fixture-agent',
      name: 'Fixture Agent',
      version,
      description: 'A small ACP agent served by the test registry',
      repository: 'https://example.com/fixture-agent',
      authors: ['Switchboard tests'],
      license: 'MIT',
      icon: `${this.base}/icons/fixture-agent.svg`,
      distribution: {
        binary: { [platform]: { archive: `${this.base}${archivePath}`, cmd: './fixture/fixture-agent', args: [], env: {} } }
      }
    }
  }

  /** An npm package (as `npm pack` makes it) whose bin starts the scripted agent; written to `dir`, its path returned. */
  async npmTarball(dir: string): Promise<string> {
    const pkg = join(dir, 'package')
    await fs.mkdir(pkg, { recursive: true })
    await fs.writeFile(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'fixture-npx-agent', version: '3.0.0', bin: { 'fixture-npx-agent': 'agent.sh' } })
    )
    await fs.writeFile(join(pkg, 'agent.sh'), launcherScript('npx-3.0.0'), { mode: 0o755 })
    const file = join(dir, 'fixture-npx-agent-3.0.0.tgz')
    await tar.c({ gzip: true, cwd: dir, file, portable: true }, ['package'])
    return file
  }
}
