import { createReadStream, createWriteStream, promises as fs } from 'node:fs'
import { basename, dirname, isAbsolute, posix, relative, resolve, sep } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import * as tar from 'tar'
import unbzip2 from 'unbzip2-stream'
import yauzl from 'yauzl'
import { HostError } from '../errors'
import { causeOf, get } from './http'

/**
 * A registry agent's archive: downloaded with progress and checked whole, then
 * unpacked into a folder of its own. Every entry must stay inside that folder:
 * a path that leaves it, a link whose target leaves it, or an entry that
 * passes through a link refuses the whole archive (nothing is half-kept: the
 * caller unpacks into a staging folder and removes it on any error).
 */

export type ArchiveFormat = 'zip' | 'tar.gz' | 'tar.bz2' | 'raw'

const INSTALLERS = ['.dmg', '.pkg', '.deb', '.rpm', '.msi', '.appimage', '.exe.msi']
/** No data for this long during a download stops it. */
const STALL_MS = 30_000

/** The archive's format, from its URL's path (FORMAT.md: zip, tar.gz, tgz, tar.bz2, tbz2, or a raw binary). */
export function archiveFormat(url: string): ArchiveFormat {
  const path = new URL(url).pathname.toLowerCase()
  if (path.endsWith('.zip')) return 'zip'
  if (path.endsWith('.tar.gz') || path.endsWith('.tgz')) return 'tar.gz'
  if (path.endsWith('.tar.bz2') || path.endsWith('.tbz2')) return 'tar.bz2'
  const installer = INSTALLERS.find((ext) => path.endsWith(ext))
  if (installer)
    throw new HostError(
      'archive_refused',
      `${basename(path)} is an installer (${installer}), which Switchboard cannot unpack; install the agent by hand.`
    )
  return 'raw'
}

/**
 * Downloads `url` to `file`, reporting bytes as they come. Throws
 * `download_failed` with a sentence when the server refuses, the connection
 * drops or stalls, or fewer bytes arrive than the server announced.
 */
export async function download(url: string, file: string, onProgress: (received: number, total: number | null) => void): Promise<void> {
  const controller = new AbortController()
  let stall = setTimeout(() => controller.abort(), STALL_MS)
  const name = basename(new URL(url).pathname) || url
  let received = 0
  let total: number | null = null
  try {
    const response = await get(url, controller.signal)
    if (!response.ok || !response.body) throw new Error(`the server answered ${response.status} ${response.statusText}`.trim())
    const length = Number(response.headers.get('content-length'))
    total = Number.isFinite(length) && length > 0 ? length : null
    onProgress(0, total)
    let lastReport = 0
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length
        clearTimeout(stall)
        stall = setTimeout(() => controller.abort(), STALL_MS)
        const now = Date.now()
        if (now - lastReport > 100) {
          lastReport = now
          onProgress(received, total)
        }
        done(null, chunk)
      }
    })
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), counter, createWriteStream(file))
    if (total !== null && received !== total) throw new Error(`only ${received} of ${total} bytes arrived`)
    if (received === 0) throw new Error('the server sent an empty file')
    onProgress(received, total)
  } catch (error) {
    const reason = controller.signal.aborted ? `no data for ${STALL_MS / 1000} s` : (causeOf(error)?.message ?? (error as Error).message)
    const at = received > 0 ? ` after ${received}${total ? ` of ${total}` : ''} bytes` : ''
    throw new HostError('download_failed', `The download of ${name} stopped${at} (${reason}). Nothing was installed; try again.`)
  } finally {
    clearTimeout(stall)
  }
}

/**
 * Unpacks `file` into `target` (an empty folder). Throws `archive_refused`
 * naming the first entry that would leave it, or when the archive is damaged.
 */
export async function unpack(file: string, format: ArchiveFormat, target: string, rawName: string): Promise<void> {
  const guard = new EntryGuard(target)
  try {
    if (format === 'raw') await fs.copyFile(file, resolve(target, rawName))
    else if (format === 'zip') await unzip(file, guard)
    else await untar(file, format, guard)
  } catch (error) {
    if (error instanceof HostError) throw error
    throw new HostError('archive_refused', `The archive was refused: it could not be unpacked (${(error as Error).message}). Nothing was installed.`)
  }
}

/** The checks every entry passes, whatever the archive's kind. */
class EntryGuard {
  private readonly links = new Set<string>()

  constructor(readonly target: string) {}

  /** The entry's absolute place, after refusing one that leaves the folder or passes through a link. */
  place(path: string, type: 'file' | 'directory' | 'symlink' | 'hardlink', linkTarget?: string): string {
    const name = path.replace(/\\/g, '/')
    if (!name || name.includes('\0')) this.refuse(path, 'an empty or invalid name')
    if (posix.isAbsolute(name) || /^[a-z]:/i.test(name)) this.refuse(path, 'an absolute path')
    const normal = posix.normalize(name).replace(/\/$/, '')
    if (normal === '..' || normal.startsWith('../')) this.refuse(path, 'a path that leaves the folder')
    const parts = normal.split('/')
    for (let i = 1; i < parts.length; i++) {
      if (this.links.has(parts.slice(0, i).join('/'))) this.refuse(path, `a path through the link ${parts.slice(0, i).join('/')}`)
    }
    const place = resolve(this.target, normal)
    if (!this.inside(place)) this.refuse(path, 'a path that leaves the folder')
    if (type === 'symlink' || type === 'hardlink') {
      const link = (linkTarget ?? '').replace(/\\/g, '/')
      if (!link || posix.isAbsolute(link) || /^[a-z]:/i.test(link)) this.refuse(path, `a link to an absolute path (${linkTarget})`)
      const to = type === 'symlink' ? resolve(dirname(place), link) : resolve(this.target, link)
      if (!this.inside(to)) this.refuse(path, `a link that points outside the folder (${linkTarget})`)
      if (type === 'symlink') this.links.add(normal)
    }
    return place
  }

  private inside(path: string): boolean {
    const rel = relative(this.target, path)
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && !rel.startsWith(`..${sep}`))
  }

  private refuse(entry: string, why: string): never {
    throw new HostError('archive_refused', `The archive was refused: its entry '${entry}' is ${why}. Nothing was installed.`)
  }
}

async function untar(file: string, format: 'tar.gz' | 'tar.bz2', guard: EntryGuard): Promise<void> {
  let refusal: unknown = null
  const unpacker = tar.x({
    cwd: guard.target,
    strict: true,
    filter: (path, entry) => {
      if (refusal) return false
      const type = (entry as tar.ReadEntry).type
      try {
        if (type === 'Directory' || type === 'GNUDumpDir') guard.place(path, 'directory')
        else if (type === 'File' || type === 'OldFile' || type === 'ContiguousFile') guard.place(path, 'file')
        else if (type === 'SymbolicLink') guard.place(path, 'symlink', (entry as tar.ReadEntry).linkpath)
        else if (type === 'Link') guard.place(path, 'hardlink', (entry as tar.ReadEntry).linkpath)
        else
          throw new HostError(
            'archive_refused',
            `The archive was refused: its entry '${path}' is a ${type}, not a file, folder or link. Nothing was installed.`
          )
        return true
      } catch (error) {
        refusal = error
        return false
      }
    }
  })
  const source = createReadStream(file)
  await (format === 'tar.bz2' ? pipeline(source, unbzip2(), unpacker) : pipeline(source, unpacker))
  if (refusal) throw refusal
}

function unzip(file: string, guard: EntryGuard): Promise<void> {
  return new Promise((done, fail) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (openError, zip) => {
      if (openError || !zip) return fail(openError ?? new Error('not a zip archive'))
      const stop = (error: unknown) => {
        zip.close()
        fail(error)
      }
      zip.on('error', stop)
      zip.on('end', () => done())
      zip.on('entry', (entry: yauzl.Entry) => {
        const mode = (entry.externalFileAttributes >>> 16) & 0o177777
        const kind = (mode & 0o170000) === 0o120000 ? 'symlink' : entry.fileName.endsWith('/') ? 'directory' : 'file'
        void (async () => {
          if (kind === 'directory') {
            await fs.mkdir(guard.place(entry.fileName, 'directory'), { recursive: true })
            return
          }
          const content = await readEntry(zip, entry)
          if (kind === 'symlink') {
            const place = guard.place(entry.fileName, 'symlink', content.toString('utf8'))
            await fs.mkdir(dirname(place), { recursive: true })
            await fs.symlink(content.toString('utf8'), place)
          } else {
            const place = guard.place(entry.fileName, 'file')
            await fs.mkdir(dirname(place), { recursive: true })
            await fs.writeFile(place, content, { mode: mode & 0o777 ? (mode & 0o777) | 0o600 : 0o644 })
          }
        })().then(() => zip.readEntry(), stop)
      })
      zip.readEntry()
    })
  })
}

function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  return new Promise((done, fail) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) return fail(error ?? new Error(`cannot read ${entry.fileName}`))
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('error', fail)
      stream.on('end', () => done(Buffer.concat(chunks)))
    })
  })
}
