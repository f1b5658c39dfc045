/**
 * Where the window is asked to go from outside it: a session, or a project.
 * Said by `switchboard open <id>` and `switchboard <folder>` (through the
 * contract's `app.navigate`) and by links (`switchboard://session/<id>`,
 * `switchboard://project?path=…`, read by the desktop shell). Navigation only:
 * going somewhere never starts a prompt, adds a project or changes a setting.
 * No zod here: the window imports it (the request's schema is in request-params.ts).
 */

export type NavigationTarget = { kind: 'session'; id: string } | { kind: 'project'; path: string }

/** What the window is told: the target found (a project by its id). */
export type Navigation = { kind: 'session'; id: string } | { kind: 'project'; id: string }

export const LINK_SCHEME = 'switchboard'

export function sessionLink(id: string): string {
  return `${LINK_SCHEME}://session/${encodeURIComponent(id)}`
}

export function projectLink(path: string): string {
  return `${LINK_SCHEME}://project?path=${encodeURIComponent(path)}`
}

/** The target a link names, or why it names none (a malformed link is ignored, with this in the log). */
export function linkTarget(link: string): { target: NavigationTarget } | { ignored: string } {
  let url: URL
  try {
    url = new URL(link)
  } catch {
    return { ignored: 'not a URL' }
  }
  if (url.protocol !== `${LINK_SCHEME}:`) return { ignored: `not a ${LINK_SCHEME}:// link` }
  if (url.username || url.password || url.port) return { ignored: 'a link carries no user, password or port' }
  if (url.hostname === 'session') {
    // Read from the link as written: a URL parser resolves `..` and escapes, which a session id never has.
    const id = /^switchboard:\/\/session\/([\w-]{1,200})\/?$/i.exec(link)?.[1]
    if (!id) return { ignored: 'a session link is switchboard://session/<id>' }
    return { target: { kind: 'session', id } }
  }
  if (url.hostname === 'project') {
    const paths = url.searchParams.getAll('path')
    const path = paths[0] ?? ''
    if (
      (url.pathname !== '' && url.pathname !== '/') ||
      paths.length !== 1 ||
      [...url.searchParams.keys()].length !== 1 ||
      path === '' ||
      path.length > 4096 ||
      path.includes('\0')
    ) {
      return { ignored: 'a project link is switchboard://project?path=<folder>' }
    }
    return { target: { kind: 'project', path } }
  }
  return { ignored: `${LINK_SCHEME}://${url.hostname} is not a session or a project` }
}
