import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { app } from 'electron'
import electronUpdater, { type AppUpdater, type ProgressInfo, type UpdateInfo } from 'electron-updater'
import type { UpdateState } from '../shared/updates'

/**
 * Updates that install themselves, in the main process: electron-updater with
 * a generic feed, the address the user's `updateFeed` setting (settings.json
 * in the data folder). Off in development (`!app.isPackaged`) and when no feed
 * is set. Checked at start and every few hours; an update found is downloaded
 * in the background and checked before it counts as ready (its sha512 from the
 * feed's latest*.yml; on Windows also the publisher's signature, from
 * app-update.yml, which electron-builder writes). Nothing is installed until
 * the user says yes (`install`, asked through the Host, which knows whether an
 * agent is mid-turn): `restart` quits now and installs as the app ends, `quit`
 * installs whenever the app next quits. A feed that cannot be reached is a log
 * line: no dialog, no notice.
 */

export const CHECK_EVERY_MS = 4 * 60 * 60 * 1000
export const UPDATE_FEED_SETTING = 'updateFeed'

export interface ShellUpdates {
  readonly state: UpdateState
  /** The user's yes (after the Host asked about turns under way). */
  install(when: 'restart' | 'quit'): void
  stop(): void
}

/** Starts the updater, or says why updates are off; `tell` hears every state (the Host passes it on to the windows). */
export async function startUpdates(dataDir: string, tell: (state: UpdateState) => void): Promise<ShellUpdates> {
  const feed = await readUpdateFeed(dataDir)
  if (!app.isPackaged || !feed.url) {
    const state: UpdateState = { status: 'off', reason: app.isPackaged ? 'no-feed' : 'development' }
    if (feed.problem) console.error(`Updates are off: ${feed.problem}`)
    tell(state)
    return { state, install: () => undefined, stop: () => undefined }
  }
  return new FeedUpdates(electronUpdater.autoUpdater, feed.url, tell)
}

/** The feed named in settings.json, when it is an http(s) address; `problem` when something else is there. */
export async function readUpdateFeed(dataDir: string): Promise<{ url?: string; problem?: string }> {
  let settings: unknown
  try {
    settings = JSON.parse(await readFile(join(dataDir, 'settings.json'), 'utf8'))
  } catch {
    return {}
  }
  const value = (settings as Record<string, unknown> | null)?.[UPDATE_FEED_SETTING]
  if (value === undefined || value === null || value === '') return {}
  if (typeof value !== 'string' || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    return { problem: `the ${UPDATE_FEED_SETTING} setting in settings.json is not an http(s) address: ${JSON.stringify(value)}` }
  }
  return { url: value.endsWith('/') ? value : `${value}/` }
}

class FeedUpdates implements ShellUpdates {
  state: UpdateState = { status: 'idle' }
  private readonly timer: NodeJS.Timeout
  private agreed: 'restart' | 'quit' | null = null
  private downloading = false

  constructor(
    private readonly updater: AppUpdater,
    feed: string,
    private readonly tell: (state: UpdateState) => void
  ) {
    updater.logger = { info: () => undefined, warn: (m: unknown) => log(String(m)), error: () => undefined }
    updater.autoDownload = true
    // Never on its own: only once the user said yes (installOnQuit below).
    updater.autoInstallOnAppQuit = false
    updater.setFeedURL({ provider: 'generic', url: feed })
    updater.on('checking-for-update', () => this.set({ status: 'checking' }))
    updater.on('update-not-available', () => this.set({ status: 'idle', checkedAt: new Date().toISOString() }))
    updater.on('update-available', (info: UpdateInfo) => {
      this.downloading = true
      this.set({ status: 'downloading', version: info.version, transferred: 0, total: sizeOf(info) })
    })
    updater.on('download-progress', (progress: ProgressInfo) => this.progress(progress))
    updater.on('update-downloaded', (info: UpdateInfo) => {
      this.downloading = false
      this.set({ status: 'ready', version: info.version, installOnQuit: false })
    })
    updater.on('error', (error: Error) => this.failed(error))
    // The app is ending (the Host and its agents stopped first, main.ts): the update the user agreed to goes in now.
    app.on('quit', () => this.installAtQuit())
    this.check()
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS)
    this.timer.unref?.()
    log(`checking ${feed} at start and every ${CHECK_EVERY_MS / 3_600_000} hours`)
  }

  install(when: 'restart' | 'quit'): void {
    if (this.state.status !== 'ready') return
    this.agreed = when
    if (!hasInstall(this.updater)) {
      // macOS: Squirrel takes the update from the updater only now, then installs it as the app quits (restart: at once).
      if (when === 'restart') this.updater.quitAndInstall()
      else this.installOnQuitBySquirrel()
    }
    if (when === 'quit') this.set({ ...this.state, installOnQuit: true })
    else if (hasInstall(this.updater)) app.quit()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private check(): void {
    // Nothing new is looked for once an update waits for the user, or while one downloads.
    if (this.state.status === 'ready' || this.downloading) return
    // Failures are said by the 'error' event (failed, below), the download's too.
    this.updater.checkForUpdates().then(
      (result) => result?.downloadPromise?.catch(() => undefined),
      () => undefined
    )
  }

  private progress({ transferred, total }: ProgressInfo): void {
    if (this.state.status !== 'downloading') return
    // A state per whole percent: enough for a bar, not an event per network chunk.
    const step = (n: number): number => Math.floor((100 * n) / Math.max(total, 1))
    if (step(transferred) === step(this.state.transferred) && transferred < total) return
    this.set({ ...this.state, transferred, total })
  }

  private failed(error: Error): void {
    if (!this.downloading) {
      // The feed is down, or says nothing usable: the next check may do better. A log line, nothing shown.
      log(`could not check for updates: ${firstLine(error)}`)
      this.set({ status: 'idle' })
      return
    }
    this.downloading = false
    const version = this.state.status === 'downloading' ? this.state.version : undefined
    const message = refusedBecause(error)
    log(`update ${version ?? ''} not installed: ${message}`)
    this.set({ status: 'failed', version, message })
  }

  private installAtQuit(): void {
    if (!this.agreed || this.state.status !== 'ready' || !hasInstall(this.updater)) return
    log(`installing ${this.state.version} as Switchboard quits${this.agreed === 'restart' ? ', then starting it again' : ''}`)
    // Windows and Linux: the installer (or the new AppImage) runs now that the app's processes have ended.
    this.updater.install(true, this.agreed === 'restart')
  }

  /** macOS, "When I quit": the download (kept, checked again) is handed to Squirrel, which installs it at the quit. */
  private installOnQuitBySquirrel(): void {
    this.updater.autoInstallOnAppQuit = true
    this.updater.checkForUpdates().then(
      (result) => result?.downloadPromise?.catch(() => undefined),
      () => undefined
    )
  }

  private set(state: UpdateState): void {
    // After the yes the update stays ready (macOS checks again to hand it to Squirrel): only a failure is news then.
    if (this.agreed && this.state.status === 'ready' && state.status !== 'ready' && state.status !== 'failed') return
    this.state = state
    this.tell(state)
  }
}

/** Why a downloaded update was refused, in words a user can act on; the updater's own words follow. */
function refusedBecause(error: Error): string {
  const code = (error as Error & { code?: string }).code
  if (code === 'ERR_CHECKSUM_MISMATCH' || /checksum mismatch/i.test(error.message))
    return `The file downloaded does not match the checksum its feed published, so it was deleted and not installed (${firstLine(error)}).`
  if (/not signed|publisherName|signature/i.test(error.message))
    return `The installer downloaded is not signed by Switchboard's publisher, so it was deleted and not installed (${firstLine(error)}).`
  return `The download failed; nothing was installed, and it is tried again at the next check (${firstLine(error)}).`
}

/** Windows' and Linux's updaters install on their own call; macOS's (Squirrel) only through quitAndInstall or at the quit. */
function hasInstall(updater: AppUpdater): updater is AppUpdater & { install(silent: boolean, runAfter: boolean): boolean } {
  return typeof (updater as { install?: unknown }).install === 'function'
}

function sizeOf(info: UpdateInfo): number {
  return info.files?.[0]?.size ?? 0
}

function firstLine(error: Error): string {
  return error.message.split('\n')[0]
}

function log(line: string): void {
  console.error(`switchboard updates: ${line}`)
}
