import { isAbsolute, resolve } from 'node:path'
import type { HandlerSlice } from '../handlers'
import { existingPathInside, ProjectFiles } from '../project-files'
import type { Records } from '../records'

/** The `files.*` requests: a project's files for @-mentions, and showing a session's file in the file manager. */

export interface FilesServiceOptions {
  records: Records
  /** Supplied by the Electron shell: shows a file or folder in the system's file manager. */
  revealPath?: (path: string) => void
}

export function filesHandlers({ records, revealPath }: FilesServiceOptions): HandlerSlice<'files'> {
  const projectFiles = new ProjectFiles()
  return {
    'files.list': ({ projectId, query, limit }) => projectFiles.list(records.project(projectId).cwd, query, limit),
    // A path from a session's thread, checked to be inside its folders, shown in the file manager where the shell can.
    'files.reveal': async ({ sessionId, path }) => {
      const record = records.session(sessionId)
      const roots = [record.cwd, ...(record.additionalDirectories ?? [])]
      const real = await existingPathInside(isAbsolute(path) ? path : resolve(record.cwd, path), roots)
      if (!revealPath) return { revealed: false, path: real }
      revealPath(real)
      return { revealed: true, path: real }
    }
  }
}
