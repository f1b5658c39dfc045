// @ts-check
/**
 * Makes sure Electron's binary is in node_modules/electron/dist before `npm start` (or `npm run dev`)
 * hands over to electron-vite.
 *
 * Electron >= 42 no longer downloads its binary when it is installed: it does so the first time
 * `require('electron')` runs. electron-vite's `preview` and `dev` never do that — they read
 * node_modules/electron/path.txt and fail with "Electron uninstall" when it is missing. So this
 * script downloads the binary first, through the same @electron/get that Electron's own installer
 * uses (the same URL, cache, mirror, proxy and checksum settings: ELECTRON_MIRROR,
 * ELECTRON_GET_USE_PROXY with HTTPS_PROXY, electron_config_cache, electron_use_remote_checksums),
 * showing its progress; then it runs Electron's installer (node_modules/electron/install.js), which
 * finds the file in the cache and unpacks it. When something fails, it prints one message saying
 * what failed and what to do, and exits with 1.
 *
 * Run by `npm start` after scripts/check-node.cjs has made sure this Node.js can run it.
 * ELECTRON_EXEC_PATH (electron-vite's own setting) names an Electron already on disk instead.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { arch as osArch, platform as osPlatform } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'

const require = createRequire(import.meta.url)
const electronDir = dirname(require.resolve('electron/package.json'))
/** @type {{ version: string }} */
const electronPackage = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8'))
const version = electronPackage.version
// As node_modules/electron/install.js chooses them.
const platform = process.env.ELECTRON_INSTALL_PLATFORM || process.env.npm_config_platform || osPlatform()
const arch = process.env.ELECTRON_INSTALL_ARCH || process.env.npm_config_arch || osArch()
const shown = relative(process.cwd(), electronDir) || electronDir

/** The executable's path inside dist/, as install.js writes it to path.txt. */
function platformPath() {
  if (platform === 'darwin' || platform === 'mas') return 'Electron.app/Contents/MacOS/Electron'
  if (platform === 'win32') return 'electron.exe'
  return 'electron'
}

/** What install.js checks before it downloads anything: this version's executable, where path.txt says. */
function isInstalled() {
  try {
    const installed = readFileSync(join(electronDir, 'dist', 'version'), 'utf8')
      .trim()
      .replace(/^v/, '')
    const executable = readFileSync(join(electronDir, 'path.txt'), 'utf8')
    return installed === version && executable === platformPath() && existsSync(join(electronDir, 'dist', executable))
  } catch {
    return false
  }
}

const networkAdvice = () => {
  const mirror = process.env.ELECTRON_MIRROR || process.env.npm_config_electron_mirror
  return [
    '  - Check that this computer is online, then run the command again.',
    '  - Behind a proxy: set HTTPS_PROXY (e.g. HTTPS_PROXY=http://proxy.example:3128) and ELECTRON_GET_USE_PROXY=1.',
    mirror
      ? `  - ELECTRON_MIRROR is set to ${mirror}: it must hold v${version}/ with the zip and its SHASUMS256.txt.`
      : `  - To download from a mirror, set ELECTRON_MIRROR to its base URL (the folder that holds v${version}/).`,
    '  - To use an Electron already on this computer, set ELECTRON_EXEC_PATH to its executable.'
  ]
}

/**
 * Prints one message saying what failed and what to do, and exits with 1.
 * @param {string} headline
 * @param {string} what what failed, in a sentence
 * @param {string | undefined} url the URL tried last, if any
 * @param {string[]} todo
 * @returns {never}
 */
function fail(headline, what, url, todo) {
  const lines = ['', headline, `  What failed: ${what}`, ...(url ? [`  URL tried:   ${url}`] : []), '', 'What to do:', ...todo, '']
  process.stderr.write(lines.join('\n') + '\n')
  process.exit(1)
}

/**
 * A sentence for an error thrown while downloading or checking the file.
 * @param {unknown} error
 * @returns {string}
 */
function describeFailure(error) {
  if (!(error instanceof Error)) return String(error)
  const name = error.constructor.name
  /** @type {{ code?: string, message?: string } | undefined} */
  const cause = error.cause && typeof error.cause === 'object' ? error.cause : undefined
  const code = cause?.code
  if (name === 'HTTPError' && 'response' in error) {
    /** @type {{ status?: number, statusText?: string }} */
    const response = /** @type {any} */ (error).response ?? {}
    const status = `${response.status ?? '?'} ${response.statusText ?? ''}`.trim()
    return response.status === 404 ? `the server answered ${status}: it has no such file.` : `the server answered ${status}.`
  }
  if (code === 'ECONNREFUSED') return 'the connection was refused (nothing answers at that address).'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the server’s name could not be looked up (no network, or a proxy is needed).'
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') return 'the connection timed out.'
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was cut off.'
  if (code && /CERT|SSL|TLS/i.test(code))
    return `the server’s certificate was not accepted (${code}); a proxy that inspects HTTPS needs its certificate in NODE_EXTRA_CA_CERTS.`
  if (name === 'ChecksumMismatchError')
    return 'the file downloaded does not match its published checksum (a broken download, or a mirror serving another file).'
  if (name === 'NoChecksumFoundError') return 'the checksum list has no line for this file.'
  if (cause?.message) return `${error.message}: ${cause.message}${code ? ` (${code})` : ''}`
  return error.message.split('\n')[0]
}

/** Shows the download's progress: one line rewritten on a terminal, a line at each quarter otherwise. */
function progressReporter() {
  const tty = process.stderr.isTTY
  let lastShown = -1
  let lastTime = 0
  /** @param {{ transferred: number, total: number | null, percent: number }} progress */
  return (progress) => {
    const size = (/** @type {number} */ bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.ceil(bytes / 1e3)} kB`)
    const percent = Math.floor(progress.percent * 100)
    const text = progress.total ? `${size(progress.transferred)} of ${size(progress.total)} (${percent}%)` : size(progress.transferred)
    if (tty) {
      const now = Date.now()
      if (progress.percent < 1 && now - lastTime < 200) return
      lastTime = now
      process.stderr.write(`\r  ${text}   ${progress.percent >= 1 ? '\n' : ''}`)
    } else {
      const quarter = Math.floor(progress.percent * 4)
      if (progress.total && quarter > lastShown) {
        lastShown = quarter
        process.stderr.write(`  ${text}\n`)
      }
    }
  }
}

async function download() {
  const electronRequire = createRequire(join(electronDir, 'package.json'))
  /** @type {typeof import('@electron/get')} */
  const get = await import(pathToFileURL(electronRequire.resolve('@electron/get')).href)
  const fetcher = new get.FetchDownloader()
  const onProgress = progressReporter()
  /** @type {string | undefined} */
  let urlTried
  /** @type {import('@electron/get').Downloader<any>} */
  const downloader = {
    async download(url, targetPath, options) {
      urlTried = url
      if (url.endsWith('SHASUMS256.txt')) return fetcher.download(url, targetPath, { ...options, quiet: true })
      process.stderr.write(`Downloading Electron ${version} for ${platform}-${arch} (about 100 MB, only this once) from ${url}\n`)
      return fetcher.download(url, targetPath, { ...options, quiet: true, getProgressCallback: onProgress })
    }
  }
  const useRemoteChecksums = process.env.electron_use_remote_checksums || process.env.npm_config_electron_use_remote_checksums
  try {
    await get.downloadArtifact({
      version,
      artifactName: 'electron',
      platform,
      arch,
      cacheRoot: process.env.electron_config_cache,
      checksums: useRemoteChecksums ? undefined : JSON.parse(readFileSync(join(electronDir, 'checksums.json'), 'utf8')),
      downloader
    })
  } catch (error) {
    fail(
      `Could not download Electron ${version} (${platform}-${arch}), which Switchboard runs in.`,
      describeFailure(error),
      urlTried,
      networkAdvice()
    )
  }
}

/** Runs Electron's own installer, which takes the file from the cache just filled and unpacks it. */
function unpack() {
  process.stderr.write(`Unpacking Electron ${version} into ${join(shown, 'dist')}\n`)
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(electronDir, 'install.js')], { stdio: ['ignore', 'inherit', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const failed = (/** @type {string} */ what) =>
      fail(`Could not unpack Electron ${version} into ${join(shown, 'dist')}.`, what, undefined, [
        '  - Check that there is free disk space and that node_modules can be written to, then run the command again.',
        `  - If it still fails, delete ${shown} and run \`npm install\` again.`
      ])
    child.on('error', (error) => failed(`Electron's installer could not be started: ${error.message}`))
    child.on('close', (code) => {
      if (code === 0 && isInstalled()) return resolve(undefined)
      failed(`Electron's installer (${join(shown, 'install.js')}) failed: ${stderr.trim().split('\n')[0] || `it exited with ${code}`}`)
    })
  })
}

async function main() {
  const execPath = process.env.ELECTRON_EXEC_PATH
  if (execPath) {
    if (existsSync(execPath)) return
    process.stderr.write(`\nELECTRON_EXEC_PATH is set to ${execPath}, which does not exist. Point it at an Electron executable, or unset it.\n\n`)
    process.exit(1)
  }
  if (isInstalled()) return
  await download()
  await unpack()
  process.stderr.write(`Electron ${version} is ready.\n`)
}

await main()
