import { app } from 'electron'
import { LINK_SCHEME, linkTarget, type NavigationTarget } from '../shared/navigation'

/**
 * switchboard:// links (shared/navigation.ts): the app is their handler
 * (electron-builder's `protocols`, `setAsDefaultProtocolClient`), and a link
 * reaches it in the command line of its start, in a second start's (handed
 * over by `second-instance`), or as macOS's `open-url`. A link only moves the
 * window: the Host checks the session or project exists and tells the windows
 * (`app.navigate`). A malformed link is ignored, with a line in the log.
 */
export class LinkRouter {
  private pending: NavigationTarget[] = []
  private deliver: ((target: NavigationTarget) => void) | null = null

  /** Follows a link, now or once the Host is open. */
  open(link: string): void {
    const read = linkTarget(link)
    if ('ignored' in read) {
      console.warn(`Switchboard ignored the link ${JSON.stringify(link.slice(0, 300))}: ${read.ignored}.`)
      return
    }
    if (this.deliver) this.deliver(read.target)
    else this.pending.push(read.target)
  }

  /** The links in a start's command line (argv). */
  openAll(argv: readonly string[]): void {
    for (const arg of argv) if (arg.toLowerCase().startsWith(`${LINK_SCHEME}:`)) this.open(arg)
  }

  /** The Host is open: links go to it from now on (those that came before first). */
  ready(deliver: (target: NavigationTarget) => void): void {
    this.deliver = deliver
    for (const target of this.pending.splice(0)) deliver(target)
  }
}

/**
 * The packaged app handles switchboard:// links. A development run does not take them over: the handler would be
 * this checkout's Electron, left registered after it quits.
 */
export function registerLinkScheme(): void {
  if (app.isPackaged && !app.isDefaultProtocolClient(LINK_SCHEME)) app.setAsDefaultProtocolClient(LINK_SCHEME)
}
