import { promises as fs } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { configListing, driverOverrides, overridesFor, splitZ, type GitOptions } from './git'

/**
 * `driverOverrides` for a checkpoint, remembered per repository while every
 * configuration file git read for it (and every one it would read if it
 * appeared) is unchanged: a checkpoint then starts one git instead of two.
 *
 * Unchanged means the same inode, size, modification and change time
 * (`ctime`, which nothing can set back). A listing is remembered only when
 * none of those files changed in the two seconds before it was made (git's own
 * care for "racy" timestamps: a change in the same tick as the listing, or
 * between the listing and the look at the files, leaves a recent `ctime`), and
 * only when every file it could read is known: its origins, the user's and the
 * system's files, and each `include.path` (an `includeIf` other than
 * `gitdir:` depends on more than files, so such a configuration is listed at
 * every checkpoint). On Windows, where the system's files are elsewhere, it is
 * listed every time.
 */
export class DriverCache {
  private readonly known = new Map<string, { overrides: string[]; files: Map<string, string> }>()

  async overrides(options: GitOptions): Promise<string[]> {
    if (process.platform === 'win32') return driverOverrides(options)
    const key = JSON.stringify([options.configFrom ?? options.cwd, options.gitDir ?? '', options.workTree ?? ''])
    const cached = this.known.get(key)
    if (cached && (await unchanged(cached.files))) return cached.overrides
    this.known.delete(key)
    const listedAt = Date.now()
    const parts = splitZ(await configListing(options, true))
    const entries: string[] = []
    const origins: string[] = []
    for (let i = 0; i + 1 < parts.length; i += 2) {
      origins.push(parts[i] ?? '')
      entries.push(parts[i + 1] ?? '')
    }
    const overrides = overridesFor(entries, options)
    const files = readable(origins, entries, options.configFrom ?? options.cwd)
    const kept = files && (await signatures(files, listedAt))
    if (kept) this.known.set(key, { overrides, files: kept })
    return overrides
  }
}

/** Every file the listing came from or could come from, or null when one cannot be named. */
function readable(origins: string[], entries: string[], cwd: string): string[] | null {
  const home = process.env.HOME || homedir()
  const xdg = process.env.XDG_CONFIG_HOME || join(home, '.config')
  const files = new Set([join(home, '.gitconfig'), join(xdg, 'git', 'config'), '/etc/gitconfig'])
  for (const [i, origin] of origins.entries()) {
    if (origin === 'command line:') continue
    if (!origin.startsWith('file:')) return null
    const file = resolve(cwd, origin.slice('file:'.length))
    files.add(file)
    const [key = '', value = ''] = (entries[i] ?? '').split(/\n(.*)/s)
    const include = /^include(?:if\.(.*))?\.path$/is.exec(key)
    if (!include) continue
    if (include[1] !== undefined && !/^gitdir(\/i)?:/i.test(include[1])) return null
    if (value.startsWith('~/')) files.add(join(home, value.slice(2)))
    else if (isAbsolute(value)) files.add(value)
    else if (value && !value.startsWith('~') && !value.startsWith('%')) files.add(resolve(dirname(file), value))
    else return null
  }
  return [...files]
}

/** Each file's signature, or null when one changed too recently to be trusted. */
async function signatures(files: string[], listedAt: number): Promise<Map<string, string> | null> {
  const kept = new Map<string, string>()
  for (const file of files) {
    const stat = await fs.stat(file, { bigint: true }).catch(() => null)
    if (stat && Number(stat.ctimeMs) >= listedAt - 2_000) return null
    kept.set(file, signature(stat))
  }
  return kept
}

async function unchanged(files: Map<string, string>): Promise<boolean> {
  for (const [file, was] of files) {
    if (signature(await fs.stat(file, { bigint: true }).catch(() => null)) !== was) return false
  }
  return true
}

function signature(stat: import('node:fs').BigIntStats | null): string {
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}` : 'none'
}
