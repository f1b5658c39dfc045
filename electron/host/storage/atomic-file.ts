import { promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'

/**
 * Crash-safe whole-file writes, for db.json and the other files the Host keeps. A write goes to a temporary file
 * beside the target, is flushed to the disk (fsync), then renamed over the
 * target, and the folder is flushed so the rename itself survives a power
 * loss. A crash at any moment leaves either the old file or the new one, never
 * a mix. lowdb's own adapter (steno) renames but never fsyncs, so a power loss
 * could leave an empty db.json behind it.
 *
 * Writes are serialised; while one is on its way, later calls wait for a
 * single next write carrying the newest text (older pending texts are
 * superseded), so a burst of saves costs at most two writes.
 */
export class AtomicTextFile {
  private readonly temp: string
  /** The last write queued (resolved when idle). */
  private tail: Promise<void> = Promise.resolve()
  /** The write that has not started yet, which new texts join. */
  private queued: Promise<void> | null = null
  private queuedText: string | (() => string | Uint8Array[]) | null = null

  /** `mode`: the file's permissions, set before anything is written to it: the owner's alone unless told (the data folder is private, private-files.ts). */
  constructor(
    readonly file: string,
    private readonly mode: number | undefined = 0o600
  ) {
    this.temp = join(dirname(file), `.${basename(file)}.tmp`)
  }

  /** The file's text, or null when it does not exist. */
  async read(): Promise<string | null> {
    try {
      return await fs.readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  /**
   * Resolves once `text` (or a newer text) is durably in place. A function is called for the text (or its bytes, in
   * pieces) when the write starts: one superseded before then is never called (a large file saved often, db.json, is
   * serialised once a write rather than once a save).
   */
  write(text: string | (() => string | Uint8Array[])): Promise<void> {
    this.queuedText = text
    if (!this.queued) {
      const run = this.tail
        .catch(() => undefined)
        .then(() => {
          this.queued = null
          const next = this.queuedText
          this.queuedText = null
          return next === null ? undefined : this.writeNow(typeof next === 'function' ? next() : next)
        })
      this.queued = run
      this.tail = run
    }
    return this.queued
  }

  /** Resolves once every write asked for so far has ended, failed ones too (each failure went to its own caller). */
  settled(): Promise<void> {
    return this.tail.catch(() => undefined)
  }

  /**
   * Resolves once the text `pieces` make is durably in place, after the writes queued before it: written piece by
   * piece as they come, never whole in memory (a large file: the search index's). Never superseded.
   */
  writePieces(pieces: AsyncIterable<string>): Promise<void> {
    const run = this.tail.catch(() => undefined).then(() => this.writeNow(pieces))
    this.tail = run
    return run
  }

  private async writeNow(text: string | Uint8Array[] | AsyncIterable<string>): Promise<void> {
    const handle = await fs.open(this.temp, 'w', this.mode)
    try {
      // A temporary file left by a crash keeps its old mode through open: set it before writing.
      if (this.mode !== undefined && process.platform !== 'win32') await handle.chmod(this.mode)
      if (typeof text === 'string') await handle.writeFile(text, 'utf8')
      else if (Array.isArray(text)) for (const bytes of text) await handle.writeFile(bytes)
      else for await (const piece of text) await handle.write(piece, null, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await renameWithRetry(this.temp, this.file)
    await syncFolder(dirname(this.file))
  }
}

/**
 * Flushes a folder's entries (a new or renamed file) to the disk. Windows
 * cannot open a folder for that and orders its own metadata, so it is skipped
 * there; a file system that refuses it (some network mounts) is not an error.
 */
export async function syncFolder(folder: string): Promise<void> {
  if (process.platform === 'win32') return
  let handle: fs.FileHandle | undefined
  try {
    handle = await fs.open(folder, 'r')
    await handle.sync()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EISDIR' && code !== 'EPERM') throw error
  } finally {
    await handle?.close()
  }
}

/** Windows refuses a rename over a file another process (an antivirus, an indexer) holds open for a moment. */
async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.rename(from, to)
      return
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (attempt >= 10 || (code !== 'EPERM' && code !== 'EBUSY' && code !== 'EACCES')) throw error
      await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)))
    }
  }
}
