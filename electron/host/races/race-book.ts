import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Race } from '../../../shared/race'
import type { EventBus } from '../contract/events'
import { AtomicTextFile } from '../storage/atomic-file'

/**
 * The races, kept in `races.json` in the data folder (written whole and
 * atomically, apart from db.json: a racer's turn ending or a check's result is
 * a small write). Each change saves and tells the windows (`race.changed`) in
 * one step. A file that cannot be read is moved aside and said, never
 * overwritten unread. A race that was under way when the Host stopped is read
 * back with what was running marked as cut short.
 */

export const RACES_FILE = 'races.json'

export class RaceBook {
  private readonly file: AtomicTextFile
  private races: Race[] | null = null
  private loading: Promise<Race[]> | null = null
  private lastWrite: Promise<void> = Promise.resolve()

  constructor(
    dataDir: string,
    private readonly events: EventBus,
    private readonly warn: (message: string) => void
  ) {
    this.file = new AtomicTextFile(join(dataDir, RACES_FILE))
  }

  async list(): Promise<readonly Race[]> {
    return this.load()
  }

  async get(raceId: string): Promise<Race> {
    const race = (await this.load()).find((r) => r.id === raceId)
    if (!race) throw new Error(`No race with id '${raceId}' (its project may have been removed)`)
    return race
  }

  async add(race: Race): Promise<Race> {
    const races = await this.load()
    races.push(race)
    return this.saved(race)
  }

  /** Changes a race in place (`change` edits it), saves, and tells the windows. */
  async update(raceId: string, change: (race: Race) => void): Promise<Race> {
    const race = await this.get(raceId)
    change(race)
    return this.saved(race)
  }

  async settled(): Promise<void> {
    await this.lastWrite.catch(() => undefined)
  }

  private async saved(race: Race): Promise<Race> {
    const races = await this.load()
    this.lastWrite = this.file.write(JSON.stringify({ version: 1, races }, null, 2))
    await this.lastWrite
    const copy = structuredClone(race)
    this.events.emit('race.changed', copy)
    return copy
  }

  private load(): Promise<Race[]> {
    if (this.races) return Promise.resolve(this.races)
    // A read that failed (the disk) is tried again at the next request, not remembered.
    this.loading ??= this.read().then(
      (races) => (this.races = races),
      (error: unknown) => {
        this.loading = null
        throw error
      }
    )
    return this.loading
  }

  private async read(): Promise<Race[]> {
    const text = await this.file.read()
    if (text === null) return []
    let races: Race[]
    try {
      const parsed = JSON.parse(text) as { races?: unknown }
      if (!Array.isArray(parsed.races)) throw new Error('it has no list of races')
      races = (parsed.races as unknown[]).filter(isRace)
      const dropped = parsed.races.length - races.length
      if (dropped)
        this.warn(`${dropped} race${dropped === 1 ? '' : 's'} in ${RACES_FILE} could not be read and ${dropped === 1 ? 'was' : 'were'} left out.`)
    } catch (error) {
      const aside = `${this.file.file}.unreadable-${Date.now()}`
      await fs.rename(this.file.file, aside).catch(() => undefined)
      this.warn(`${RACES_FILE} could not be read (${(error as Error).message}); it was moved to ${aside} and races start empty.`)
      return []
    }
    for (const race of races) cutShort(race)
    return races
  }
}

/** A race as this version writes it (the fields the comparison relies on); anything else is left out, and said. */
function isRace(value: unknown): value is Race {
  const race = value as Partial<Race> | null
  return (
    typeof race === 'object' &&
    race !== null &&
    typeof race.id === 'string' &&
    typeof race.projectId === 'string' &&
    typeof race.prompt === 'string' &&
    Array.isArray(race.racers) &&
    race.racers.every((r) => typeof r === 'object' && r !== null && typeof r.name === 'string' && typeof r.state === 'string')
  )
}

/** What was running when the Host stopped did not end here: said so, never left "running" for ever. */
function cutShort(race: Race): void {
  for (const racer of race.racers) {
    if (racer.state === 'starting' || racer.state === 'running') {
      racer.state = 'failed'
      racer.error = 'Switchboard stopped before its turn ended; open the session to continue it'
    }
    if (racer.check?.status === 'running') racer.check = { ...racer.check, status: 'error', message: 'Switchboard stopped while it ran' }
  }
}
