import { randomUUID } from 'node:crypto'
import { basename } from 'node:path'
import type { Project } from '../../../shared/domain'
import { transportHost } from '../../../shared/transport'
import { confirmSkippingMode } from '../agents/skip-confirm'
import type { AgentSupervisor } from '../agents/supervisor'
import { checkedFolder } from '../local-files/folders'
import type { HandlerSlice } from '../contract/handlers'
import type { Records } from '../storage/records'
import type { SessionLifecycle } from '../sessions/lifecycle'
import { checkRemoteFolder } from '../ssh/remote-files'

/**
 * The `projects.*` requests: the folders the user works in, in the sidebar's
 * order. A project on another host is added for an agent over SSH: its
 * folder is checked there, and the project keeps the host (`sshHost`), not
 * the agent: any agent over SSH to that host works in it.
 *
 * A folder added (a project, or a project's extra folder) is one agents may
 * read, write and run commands in: it is added only once the user confirmed
 * it outside the page (confirmations.ts), as a change that runs a program is.
 * A folder the user just chose in the native folder picker is confirmed by
 * that choice.
 */

export interface ProjectsServiceOptions {
  records: Records
  lifecycle: SessionLifecycle
  /** The way to an SSH agent's host, to check folders there. */
  supervisor: Pick<AgentSupervisor, 'sshEndpoint' | 'sshEndpointForHost'>
  /** Supplied by the Electron shell: a native folder picker. */
  pickFolder?: () => Promise<string | null>
}

export function projectsHandlers({ records, lifecycle, supervisor, pickFolder }: ProjectsServiceOptions): HandlerSlice<'projects'> {
  /** Folders the user chose in the native picker, each confirming one `projects.add` of it. */
  const picked = new Set<string>()
  /** A folder a project names, checked where the project is (on its host, or here). */
  const checked = (project: Pick<Project, 'sshHost'>, typed: string, what: string, notAbsolute: (got: string) => string): Promise<string> =>
    project.sshHost
      ? checkRemoteFolder(supervisor.sshEndpointForHost(project.sshHost, records.data.agents), typed, what)
      : checkedFolder(typed, notAbsolute)
  return {
    'projects.list': async () => [...records.data.projects],
    'projects.add': async ({ cwd, name, agentId }, request) => {
      const agent = agentId ? records.agent(agentId) : undefined
      const sshHost = agent && transportHost(agent.transport)
      if (agent && !sshHost) throw new Error(`${agent.name} runs on this computer, not over SSH: add the folder without choosing an agent`)
      const folder = agent
        ? await checkRemoteFolder(supervisor.sshEndpoint(agent), cwd, 'The project folder')
        : await checkedFolder(cwd, (got) => `The project folder must be an absolute path, like /home/you/code/app (got '${got}')`)
      const existing = records.data.projects.find((p) => p.cwd === folder && p.sshHost === sshHost)
      if (existing) return existing
      if (!picked.delete(cwd) || sshHost) {
        await request.confirm({
          action: `Add the project folder ${folder}${sshHost ? ` on ${sshHost}` : ''}`,
          confirm: 'Add project',
          programs: [],
          reach: [folderReach(folder, sshHost)]
        })
      }
      const project: Project = {
        id: randomUUID(),
        name: name?.trim() || basename(folder) || folder,
        cwd: folder,
        ...(sshHost ? { sshHost } : {}),
        createdAt: new Date().toISOString()
      }
      await records.addProject(project)
      return project
    },
    'projects.pickFolder': async () => {
      const path = pickFolder ? await pickFolder() : null
      if (path) picked.add(path)
      return { path }
    },
    'projects.setAdditionalDirectories': async ({ projectId, directories }, request) => {
      const project = records.project(projectId)
      const folders: string[] = []
      for (const directory of directories) {
        const folder = await checked(project, directory, 'Additional folder', (got) => `Additional folders must be absolute paths (got '${got}')`)
        if (folder !== project.cwd && !folders.includes(folder)) folders.push(folder)
      }
      // Taking folders away narrows what agents reach: only new ones are confirmed.
      const added = folders.filter((f) => !(project.additionalDirectories ?? []).includes(f))
      if (added.length) {
        await request.confirm({
          action: `Give ${project.name} ${added.length === 1 ? 'an extra folder' : `${added.length} extra folders`}`,
          confirm: added.length === 1 ? 'Add folder' : 'Add folders',
          programs: [],
          reach: added.map((f) => folderReach(f, project.sshHost))
        })
      }
      return records.updateProject(projectId, { additionalDirectories: folders })
    },
    'projects.setGitHooks': async ({ projectId, enabled }, request) => {
      const project = records.project(projectId)
      if (project.sshHost) throw new Error(`'${project.name}' is on ${project.sshHost}: Switchboard commits only in repositories on this computer`)
      if (enabled && !project.gitHooks) {
        await request.confirm({
          action: `Run the git hooks of “${project.name}” when you commit or merge from the Changes view`,
          confirm: 'Run its hooks',
          programs: [
            {
              label: 'Whatever hooks the repository has when you commit (an agent working there can change them)',
              commandLine: `${project.cwd}/.git/hooks/*`,
              env: []
            }
          ]
        })
      }
      return records.updateProject(projectId, { gitHooks: enabled || undefined })
    },
    'projects.setCheckCommand': async ({ projectId, command }, request) => {
      const project = records.project(projectId)
      if (project.sshHost) throw new Error(`'${project.name}' is on ${project.sshHost}: races and their checks run in worktrees on this computer`)
      // Clearing it runs nothing: only a new command is confirmed.
      if (command && command !== project.checkCommand) {
        await request.confirm({
          action: `Check “${project.name}” with this command in each worktree of a race, when you ask`,
          confirm: 'Use this command',
          programs: [
            { label: 'Run through the shell in the worktree (an agent’s changes there may change what it runs)', commandLine: command, env: [] }
          ]
        })
      }
      return records.updateProject(projectId, { checkCommand: command || undefined })
    },
    'projects.setStartingMode': async ({ projectId, agentId, modeId, confirmSkip }) => {
      const project = records.project(projectId)
      const definition = records.agent(agentId)
      const modes = { ...project.startingModes }
      if (modeId === null) delete modes[agentId]
      else {
        await confirmSkippingMode(records, definition, modeId, confirmSkip)
        modes[agentId] = modeId
      }
      return records.updateProject(projectId, { startingModes: Object.keys(modes).length ? modes : undefined })
    },
    'projects.setSystemPrompt': async ({ projectId, systemPrompt }) => {
      return records.updateProject(projectId, { systemPrompt: systemPrompt.trim() ? systemPrompt : undefined })
    },
    'projects.rename': async ({ projectId, name }) => {
      return records.updateProject(projectId, { name })
    },
    // The project leaves the sidebar with its sessions; transcripts are kept, the folder and the agents' copies are not touched.
    'projects.remove': async ({ projectId }) => {
      records.project(projectId)
      const sessions = records.data.sessions.filter((s) => s.projectId === projectId)
      for (const session of sessions) await lifecycle.drop(session.id, true)
      await records.removeProject(projectId)
      return { removedSessions: sessions.length }
    },
    'projects.reorder': async ({ projectIds }) => {
      const projects = records.data.projects
      const byId = new Map(projects.map((p) => [p.id, p]))
      const ordered = projectIds.flatMap((id) => byId.get(id) ?? [])
      if (projectIds.length !== projects.length || new Set(projectIds).size !== projectIds.length || ordered.length !== projectIds.length) {
        throw new Error('The new order must name every project exactly once (the list may have changed meanwhile; try again)')
      }
      await records.orderProjects(projectIds)
      return [...records.data.projects]
    }
  }
}

/** What adding a folder gives agents, as the confirmation says it. */
function folderReach(folder: string, sshHost: string | undefined): string {
  return `Agents you start in this project may read and write files in ${folder}${sshHost ? ` on ${sshHost}` : ''} and run the commands you allow there.`
}
