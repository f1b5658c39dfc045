import { createReadStream, createWriteStream, promises as fs } from 'node:fs'
import { basename, dirname, isAbsolute, posix, relative, resolve, sep } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import type { ReadEntry } from 'tar'
import type * as yauzl from 'yauzl'
import { HostError } from '../contract/errors'
import { causeOf, get } from './http'
import { bytesText, REGISTRY_LIMITS, type RegistryLimits } from './limits'

/**
 * A registry agent's archive: downloaded with progress and checked whole, then
 * unpacked into a folder of its own. Every entry must stay inside that folder:
 * a path that leaves it, a link whose target leaves it (resolved through every
 * link the archive made before, as the file system will: `d/l1 → ..` then
 * `d/l2 → l1/..` leaves it though each looks inside), or an entry that passes
 * through a link refuses the whole archive (nothing is half-kept: the caller
 * unpacks into a staging folder and removes it on any error). Nothing is read
 * whole: the download, and each entry as it is unpacked, are counted against
 * the limits (limits.ts) as they stream, and a zip bomb is refused by its size
 * and its ratio before it fills the disk.
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
export async function download(
  url: string,
  file: string,
  onProgress: (received: number, total: number | null) => void,
  maxBytes: number = REGISTRY_LIMITS.downloadBytes
): Promise<void> {
  const controller = new AbortController()
  let tooLarge = false
  let stall = setTimeout(() => controller.abort(), STALL_MS)
  const name = basename(new URL(url).pathname) || url
  let received = 0
  let total: number | null = null
  try {
    const response = await get(url, controller.signal)
    if (!response.ok || !response.body) throw new Error(`the server answered ${response.status} ${response.statusText}`.trim())
    const length = Number(response.headers.get('content-length'))
    total = Number.isFinite(length) && length > 0 ? length : null
    if (total !== null && total > maxBytes) {
      tooLarge = true
      controller.abort()
      throw new Error('too large')
    }
    onProgress(0, total)
    let lastReport = 0
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length
        if (received > maxBytes) {
          tooLarge = true
          // The connection is cut here: nothing past the limit is read.
          controller.abort()
          done(new Error('too large'))
          return
        }
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
    if (tooLarge) {
      throw new HostError(
        'download_failed',
        `The download of ${name} was stopped: it is larger than ${bytesText(maxBytes)}, more than an agent should be. Nothing was installed.`
      )
    }
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
export async function unpack(
  file: string,
  format: ArchiveFormat,
  target: string,
  rawName: string,
  limits: Pick<RegistryLimits, 'unpackedBytes' | 'ratio' | 'ratioFloorBytes'> = REGISTRY_LIMITS
): Promise<void> {
  const guard = new EntryGuard(target, limits, (await fs.stat(file)).size)
  try {
    if (format === 'raw') await fs.copyFile(file, resolve(target, rawName))
    else if (format === 'zip') await unzip(file, guard)
    else await untar(file, format, guard)
  } catch (error) {
    if (error instanceof HostError) throw error
    throw new HostError('archive_refused', `The archive was refused: it could not be unpacked (${(error as Error).message}). Nothing was installed.`)
  }
}

/** How many links a path may pass through before it is taken for a loop (as Linux's ELOOP). */
const MAX_LINK_HOPS = 40
/** A zip's link is a short path: a longer "link" is not read. */
const MAX_LINK_BYTES = 4096

/** The checks every entry passes, whatever the archive's kind. */
class EntryGuard {
  /** Each symbolic link made so far: its place (relative, normalised) and its target as written. */
  private readonly links = new Map<string, string>()
  /** Bytes unpacked so far, all entries together. */
  private unpacked = 0

  constructor(
    readonly target: string,
    private readonly limits: Pick<RegistryLimits, 'unpackedBytes' | 'ratio' | 'ratioFloorBytes'>,
    private readonly archiveBytes: number
  ) {}

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
      if (!link || link.includes('\0') || posix.isAbsolute(link) || /^[a-z]:/i.test(link)) {
        this.refuse(path, `a link to an absolute path (${linkTarget})`)
      }
      const to = type === 'symlink' ? resolve(dirname(place), link) : resolve(this.target, link)
      if (!this.inside(to)) this.refuse(path, `a link that points outside the folder (${linkTarget})`)
      if (type === 'hardlink') {
        // Where the file it names really is, through the links made so far.
        if (this.walk([], link.split('/')) === null) this.refuse(path, `a link that points outside the folder through other links (${linkTarget})`)
      } else {
        this.links.set(normal, link)
        // Every link again, through this one too: one made earlier may now lead out through it.
        for (const [at, to] of this.links) {
          if (this.walk(at.split('/').slice(0, -1), to.split('/')) === null) {
            this.refuse(path, `a link that points outside the folder through other links (${at} → ${to})`)
          }
        }
      }
    }
    return place
  }

  /**
   * Where `rest`, taken from the folder `from` (both as path parts inside the target), leads on disk, following
   * every link the archive made as the file system will; null when it leaves the folder or loops.
   */
  private walk(from: string[], rest: string[]): string[] | null {
    const at = [...from]
    const queue = [...rest]
    let hops = 0
    for (let part = queue.shift(); part !== undefined; part = queue.shift()) {
      if (part === '' || part === '.') continue
      if (part === '..') {
        if (at.length === 0) return null
        at.pop()
        continue
      }
      at.push(part)
      const link = this.links.get(at.join('/'))
      if (link === undefined) continue
      if (++hops > MAX_LINK_HOPS) return null
      at.pop()
      queue.unshift(...link.split('/'))
    }
    return at
  }

  /**
   * Counts an entry's bytes before it is unpacked (`size` as its header says; a zip's compressed size too):
   * refuses one that would take the whole past the limit, or a zip entry (or a tar so far) that inflates more
   * than the ratio allows.
   */
  admit(path: string, size: number, compressed?: number): void {
    this.unpacked += size
    if (this.unpacked > this.limits.unpackedBytes) {
      this.refuse(path, `more than the ${bytesText(this.limits.unpackedBytes)} an archive may unpack to (a zip bomb?)`)
    }
    const [whole, packed] = compressed === undefined ? [this.unpacked, this.archiveBytes] : [size, compressed]
    if (whole > this.limits.ratioFloorBytes && whole > packed * this.limits.ratio) {
      this.refuse(path, `${bytesText(whole)} packed into ${bytesText(packed)}, more than ${this.limits.ratio} times: a zip bomb`)
    }
  }

  /** Counts the bytes of an entry being written: more than its header announced refuses the archive. */
  counter(path: string, announced: number): Transform {
    let seen = 0
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        seen += chunk.length
        if (seen > announced) {
          done(new HostError('archive_refused', `The archive was refused: its entry '${path}' is longer than it says. Nothing was installed.`))
          return
        }
        done(null, chunk)
      }
    })
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
  // The unpackers are loaded at the first install, not with the Host: most runs install nothing (~5 MB of RSS).
  const tar = await import('tar')
  const unbzip2 = format === 'tar.bz2' ? (await import('unbzip2-stream')).default : null
  let refusal: unknown = null
  const source = createReadStream(file)
  const unpacker = tar.x({
    cwd: guard.target,
    strict: true,
    filter: (path, entry) => {
      if (refusal) return false
      const read = entry as ReadEntry
      const type = read.type
      try {
        if (type === 'Directory' || type === 'GNUDumpDir') guard.place(path, 'directory')
        else if (type === 'File' || type === 'OldFile' || type === 'ContiguousFile') {
          guard.place(path, 'file')
          guard.admit(path, read.size ?? 0)
        } else if (type === 'SymbolicLink') guard.place(path, 'symlink', read.linkpath)
        else if (type === 'Link') guard.place(path, 'hardlink', read.linkpath)
        else
          throw new HostError(
            'archive_refused',
            `The archive was refused: its entry '${path}' is a ${type}, not a file, folder or link. Nothing was installed.`
          )
        return true
      } catch (error) {
        refusal = error
        // Nothing more is inflated: a bomb stops at the entry that gave it away.
        source.destroy()
        return false
      }
    }
  })
  try {
    await (unbzip2 ? pipeline(source, unbzip2(), unpacker) : pipeline(source, unpacker))
  } catch (error) {
    throw refusal ?? error
  }
  if (refusal) throw refusal
}

async function unzip(file: string, guard: EntryGuard): Promise<void> {
  const { default: yauzl } = await import('yauzl')
  return new Promise((done, fail) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true, validateEntrySizes: true }, (openError, zip) => {
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
          if (kind === 'symlink') {
            if (entry.uncompressedSize > MAX_LINK_BYTES) throw new Error(`the link ${entry.fileName} is ${entry.uncompressedSize} bytes long`)
            const to = (await readEntry(zip, entry)).toString('utf8')
            const place = guard.place(entry.fileName, 'symlink', to)
            await fs.mkdir(dirname(place), { recursive: true })
            await fs.symlink(to, place)
            return
          }
          const place = guard.place(entry.fileName, 'file')
          guard.admit(entry.fileName, entry.uncompressedSize, entry.compressedSize)
          await fs.mkdir(dirname(place), { recursive: true })
          // Streamed to the file, counted on the way: never held whole.
          await pipeline(
            await openEntry(zip, entry),
            guard.counter(entry.fileName, entry.uncompressedSize),
            createWriteStream(place, { mode: mode & 0o777 ? (mode & 0o777) | 0o600 : 0o644, flags: 'wx' })
          )
        })().then(() => zip.readEntry(), stop)
      })
      zip.readEntry()
    })
  })
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((done, fail) => {
    zip.openReadStream(entry, (error, stream) => (error || !stream ? fail(error ?? new Error(`cannot read ${entry.fileName}`)) : done(stream)))
  })
}

/** A link's target (at most MAX_LINK_BYTES, checked before). */
async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of await openEntry(zip, entry)) {
    size += (chunk as Buffer).length
    if (size > MAX_LINK_BYTES) throw new Error(`the link ${entry.fileName} is longer than it says`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}
