import { isAbsolute, resolve } from 'node:path'
import type { AgentSupervisor } from '../agents/supervisor'
import type { HandlerSlice } from '../contract/handlers'
import { existingPathInside, ProjectFiles, walkProject } from '../local-files/project-files'
import type { Records } from '../storage/records'
import { listRemoteFiles } from '../ssh/remote-files'

/**
 * The `files.*` requests: a project's files for @-mentions (listed on its
 * host for a project there), and showing a session's file in the file
 * manager (this computer's files only).
 */

export interface FilesServiceOptions {
  records: Records
  /** The way to a project's host. */
  supervisor: Pick<AgentSupervisor, 'sshEndpointForHost'>
  /** Supplied by the Electron shell: shows a file or folder in the system's file manager. */
  revealPath?: (path: string) => void
}

export function filesHandlers({ records, supervisor, revealPath }: FilesServiceOptions): HandlerSlice<'files'> {
  const projectFiles = new ProjectFiles()
  return {
    'files.list': ({ projectId, query, limit }) => {
      const { cwd, sshHost } = records.project(projectId)
      if (!sshHost) return projectFiles.list(cwd, query, limit, () => walkProject(cwd))
      return projectFiles.list(`${sshHost}:${cwd}`, query, limit, () =>
        listRemoteFiles(supervisor.sshEndpointForHost(sshHost, records.data.agents), cwd)
      )
    },
    // A path from a session's thread, checked to be inside its folders, shown in the file manager where the shell can.
    'files.reveal': async ({ sessionId, path }) => {
      const record = records.session(sessionId)
      const host = records.findProject(record.projectId)?.sshHost
      if (host) throw new Error(`${path} is on ${host}: Switchboard shows only this computer's files in the file manager`)
      const roots = [record.cwd, ...(record.additionalDirectories ?? [])]
      const real = await existingPathInside(isAbsolute(path) ? path : resolve(record.cwd, path), roots)
      if (!revealPath) return { revealed: false, path: real }
      revealPath(real)
      return { revealed: true, path: real }
    }
  }
}
