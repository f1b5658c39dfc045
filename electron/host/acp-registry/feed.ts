import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { registryAgentSchema, registryFeedSchema, type RegistryAgent, type RegistrySnapshot } from '../../../shared/registry'
import { AtomicTextFile } from '../storage/atomic-file'
import { causeOf, get, readCapped, TooLarge } from './http'
import { bytesText, registryLimits, type RegistryLimits } from './limits'
import { privateFolder } from '../storage/private-files'

/**
 * The registry's feed: fetched with a timeout, kept in the data folder
 * (`registry/feed.json`, with each agent's icon) and served from there for a
 * day; when the feed cannot be fetched or read, the copy kept before, else the
 * snapshot bundled with the app, so the list never goes blank because the
 * registry's build broke or the network is down (Zed #55541).
 */

export interface FeedOptions {
  dataDir: string
  /** The snapshot bundled with the app (tests give their own). */
  snapshot: RegistrySnapshot
  /** How long a fetch of the feed may take (default 10 s). */
  timeoutMs?: number
  /** The feed's and each icon's size limits (limits.ts; tests lower them). */
  limits?: Partial<RegistryLimits>
}

export interface FeedResult {
  snapshot: RegistrySnapshot
  source: 'network' | 'cache' | 'snapshot'
  problem?: string
  skipped: string[]
}

const DAY_MS = 24 * 60 * 60 * 1000
const ICON_TIMEOUT_MS = 5000
const ICON_CONCURRENCY = 6

const cachedSchema = z.object({
  url: z.string(),
  fetchedAt: z.string(),
  agents: z.array(z.unknown()),
  icons: z.record(z.string(), z.string()).default({})
})

/** The feed kept in the data folder: the agents that passed (and, read back, none left out). */
interface Kept {
  snapshot: RegistrySnapshot
  skipped: string[]
}

export class RegistryFeed {
  private readonly file: AtomicTextFile
  /** One fetch at a time: concurrent listings share it. */
  private fetching: Promise<FeedResult> | null = null
  /** The copy kept, as read from the file once (undefined: not read yet; null: none). */
  private kept: Kept | null | undefined

  private readonly limits: RegistryLimits

  constructor(private readonly options: FeedOptions) {
    this.limits = registryLimits(options.limits)
    this.file = new AtomicTextFile(join(options.dataDir, 'registry', 'feed.json'))
  }

  /** The feed at `url`: the cache while it is fresh (unless `refresh`), else the network, else the cache or the snapshot. */
  async get(url: string, refresh: boolean): Promise<FeedResult> {
    const cached = await this.readCache()
    const sameUrl = cached?.snapshot.url === url ? cached : null
    if (!refresh && sameUrl && Date.now() - Date.parse(sameUrl.snapshot.fetchedAt) < DAY_MS) {
      return { snapshot: sameUrl.snapshot, source: 'cache', skipped: sameUrl.skipped }
    }
    this.fetching ??= this.fetchAndKeep(url, sameUrl).finally(() => (this.fetching = null))
    return this.fetching
  }

  private async fetchAndKeep(url: string, cached: Kept | null): Promise<FeedResult> {
    let agents: RegistryAgent[]
    let skipped: string[]
    try {
      ;({ agents, skipped } = parseFeed(await fetchText(url, this.options.timeoutMs ?? 10_000, this.limits.feedBytes), url))
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error)
      if (cached)
        return {
          snapshot: cached.snapshot,
          source: 'cache',
          skipped: cached.skipped,
          problem: `${problem} Showing the list kept from ${cached.snapshot.fetchedAt}.`
        }
      const { snapshot } = this.options
      return {
        snapshot,
        source: 'snapshot',
        skipped: [],
        problem: `${problem} Showing the list bundled with Switchboard (${snapshot.fetchedAt.slice(0, 10)}).`
      }
    }
    const icons = await fetchIcons(agents, cached?.snapshot.icons ?? {}, this.limits.iconBytes)
    const snapshot: RegistrySnapshot = { url, fetchedAt: new Date().toISOString(), agents, icons }
    await privateFolder(join(this.options.dataDir, 'registry'))
    await this.file.write(JSON.stringify(snapshot))
    this.kept = { snapshot, skipped: [] }
    return { snapshot, source: 'network', skipped }
  }

  private async readCache(): Promise<Kept | null> {
    if (this.kept === undefined) this.kept = await this.readFile()
    return this.kept
  }

  private async readFile(): Promise<Kept | null> {
    try {
      const raw = await this.file.read()
      if (raw === null) return null
      const kept = cachedSchema.parse(JSON.parse(raw))
      const { agents, skipped } = checkAgents(kept.agents)
      return { snapshot: { url: kept.url, fetchedAt: kept.fetchedAt, agents, icons: kept.icons }, skipped }
    } catch {
      return null // a damaged cache is fetched again
    }
  }
}

/** Throws a sentence unless `url` is an http(s) URL (the feed's, or an icon's it names). */
export function checkRegistryUrl(url: string): void {
  let protocol: string
  try {
    protocol = new URL(url).protocol
  } catch {
    throw new Error(`The registry URL '${url}' is not a URL.`)
  }
  if (protocol !== 'https:' && protocol !== 'http:') throw new Error(`The registry URL must start with https:// or http:// (got ${protocol}).`)
}

/** Reads a feed's text: the agents that pass the format, and why each other one was left out. Throws a sentence when it is not a feed. */
export function parseFeed(text: string, url: string): { agents: RegistryAgent[]; skipped: string[] } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new Error(`The registry at ${url} sent something that is not JSON (${(error as Error).message}).`)
  }
  const feed = registryFeedSchema.safeParse(json)
  if (!feed.success) {
    throw new Error(`The registry at ${url} sent JSON that is not a registry (${z.prettifyError(feed.error).replace(/\n/g, ' ')}).`)
  }
  return checkAgents(feed.data.agents)
}

function checkAgents(entries: unknown[]): { agents: RegistryAgent[]; skipped: string[] } {
  const agents: RegistryAgent[] = []
  const skipped: string[] = []
  const seen = new Set<string>()
  for (const entry of entries) {
    const parsed = registryAgentSchema.safeParse(entry)
    const label = typeof (entry as { id?: unknown })?.id === 'string' ? String((entry as { id: string }).id) : 'an entry without an id'
    if (!parsed.success) skipped.push(`${label}: ${z.prettifyError(parsed.error).replace(/\n/g, ' ')}`)
    else if (seen.has(parsed.data.id)) skipped.push(`${label}: listed twice (the first is shown)`)
    else {
      seen.add(parsed.data.id)
      agents.push(parsed.data)
    }
  }
  return { agents, skipped }
}

/** GETs a URL's text with a deadline and a size limit (checked as it arrives); throws a sentence that names the URL. */
async function fetchText(url: string, timeoutMs: number, maxBytes: number): Promise<string> {
  checkRegistryUrl(url)
  let response: Response
  try {
    response = await get(url, AbortSignal.timeout(timeoutMs))
  } catch (error) {
    const cause = causeOf(error)
    const why =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${Math.round(timeoutMs / 1000)} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message)
    throw new Error(`Could not reach the registry at ${url} (${why}).`)
  }
  if (!response.ok) throw new Error(`The registry at ${url} answered ${response.status} ${response.statusText}.`.replace(' .', '.'))
  try {
    return (await readCapped(response, maxBytes)).toString('utf8')
  } catch (error) {
    if (error instanceof TooLarge)
      throw new Error(`The registry at ${url} sent more than ${bytesText(maxBytes)}, more than a registry should; nothing more was read.`)
    throw new Error(`The registry at ${url} stopped sending (${causeOf(error)?.message ?? (error as Error).message}).`)
  }
}

/** Each agent's icon (SVG, small), fetched a few at a time; an icon that fails keeps the one cached, or none. */
async function fetchIcons(agents: RegistryAgent[], previous: Record<string, string>, maxBytes: number): Promise<Record<string, string>> {
  const icons: Record<string, string> = {}
  const queue = agents.flatMap((a) => (a.icon ? [{ id: a.id, icon: a.icon }] : []))
  const worker = async (): Promise<void> => {
    for (let agent = queue.shift(); agent; agent = queue.shift()) {
      try {
        const svg = await fetchText(agent.icon, ICON_TIMEOUT_MS, maxBytes)
        if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(svg)) icons[agent.id] = svg
      } catch {
        if (previous[agent.id]) icons[agent.id] = previous[agent.id]
      }
    }
  }
  await Promise.all(Array.from({ length: ICON_CONCURRENCY }, worker))
  return icons
}
