import { resolve } from 'node:path'
import type { SearchHit } from '../../../shared/search'
import { stopReasonWords } from '../../../shared/stop-reasons'
import { linkToHost } from './connect'
import { CliError, EXIT } from './exit-codes'
import type { HostLink } from './link'
import type { Streams } from './output'

/**
 * `switchboard ls` and `switchboard search`: what the window's sidebar and
 * search show, read from the same data folder (through the running Host when
 * there is one). Plain text for a person, `--json` for a script.
 */

export async function listSessions(options: { dataDir: string; project?: string; json: boolean }, streams: Streams): Promise<number> {
  const link = await linkToHost({ dataDir: options.dataDir, mustExist: true })
  try {
    const [projects, agents] = await Promise.all([link.request('projects.list', {}), link.request('agents.list', {})])
    let projectId: string | undefined
    if (options.project !== undefined) {
      const wanted = options.project
      const project =
        projects.find((p) => p.id === wanted) ??
        projects.find((p) => p.name.toLowerCase() === wanted.toLowerCase()) ??
        projects.find((p) => p.cwd === resolve(wanted))
      if (!project) {
        throw new CliError(`No project '${wanted}'. Projects: ${projects.map((p) => `${p.name} (${p.cwd})`).join(', ') || 'none yet'}.`, EXIT.usage)
      }
      projectId = project.id
    }
    const sessions = (await link.request('sessions.list', projectId ? { projectId } : {})).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
    const agentName = new Map(agents.map((agent) => [agent.id, agent.name]))
    const projectOf = new Map(projects.map((project) => [project.id, project]))
    const rows = sessions.map((session) => ({
      id: session.id,
      title: session.title,
      agent: agentName.get(session.agentId) ?? session.agentId,
      project: projectOf.get(session.projectId)?.name ?? session.projectId,
      cwd: session.cwd,
      updatedAt: session.updatedAt,
      lastStopReason: session.lastStopReason ?? null
    }))
    if (options.json) {
      streams.out(`${JSON.stringify(rows, null, 2)}\n`)
      return EXIT.ok
    }
    if (rows.length === 0) streams.err('No sessions yet.\n')
    for (const row of rows) {
      const ended = row.lastStopReason ? `  ${stopReasonWords(row.lastStopReason)}` : ''
      streams.out(`${row.id}  ${row.updatedAt.slice(0, 16).replace('T', ' ')}  ${row.project} · ${row.agent}  ${row.title}${ended}\n`)
    }
    return EXIT.ok
  } finally {
    await link.close()
  }
}

export async function searchHistory(options: { dataDir: string; text: string; json: boolean }, streams: Streams): Promise<number> {
  if (options.text.trim() === '') throw new CliError('Nothing to search for: give the text, e.g. switchboard search "flaky test".', EXIT.usage)
  const link = await linkToHost({ dataDir: options.dataDir, mustExist: true })
  try {
    const hits = await searchWhole(link, options.text)
    if (options.json) {
      streams.out(`${JSON.stringify(hits, null, 2)}\n`)
      return EXIT.ok
    }
    if (hits.length === 0) streams.err(`Nothing matches '${options.text}'.\n`)
    for (const hit of hits) {
      const where = hit.kind === 'project' ? `project ${hit.projectId}` : `session ${hit.sessionId ?? ''}`
      streams.out(`${where}  ${hit.title}\n    ${hit.snippet.text.replace(/\s+/g, ' ').trim()}\n`)
    }
    return EXIT.ok
  } finally {
    await link.close()
  }
}

/** Every hit, once the index has read every transcript (a Host opened here builds it first). */
async function searchWhole(link: HostLink, q: string): Promise<SearchHit[]> {
  for (;;) {
    const results = await link.request('search.query', { q, limit: 100 })
    if (!results.indexing) return [...results.projects, ...results.sessions, ...results.entries]
    await new Promise((resolveWait) => setTimeout(resolveWait, 100))
  }
}
