import { existsSync } from 'node:fs'
import type { ConfirmCommand } from '../contract/confirmations'
import { Host } from '../host'
import { findDoor } from '../web/door'
import { readVersion } from '../web/version'
import { CliError, EXIT } from './exit-codes'
import { answerOf, type HostLink } from './link'
import { connectDoor } from './ws-link'

export interface LinkOptions {
  dataDir: string
  /** Read-only commands (ls, search) never open a Host of their own on a folder that holds no data yet. */
  mustExist?: boolean
  /**
   * A Host opened here asks this to confirm a change that would run a program or widen what agents reach (a
   * project the command adds): the user typed the command, so what they named is confirmed, and nothing else.
   */
  confirmCommand?: ConfirmCommand
}

export async function linkToHost(options: LinkOptions): Promise<HostLink> {
  const door = await findDoor(options.dataDir).catch((error: Error) => {
    throw new CliError(error.message, EXIT.unavailable)
  })
  if (door) return connectDoor(door, options.dataDir)
  if (options.mustExist && !existsSync(options.dataDir)) {
    throw new CliError(`No Switchboard data in ${options.dataDir}: nothing to list yet (start Switchboard, or pass --data-dir).`, EXIT.usage)
  }
  let host: Host
  try {
    host = await Host.open({ dataDir: options.dataDir, version: readVersion(), confirmCommand: options.confirmCommand })
  } catch (error) {
    const message = (error as Error).message
    // Held by a Switchboard without a door (an older version, or one still starting): it cannot be reached from here.
    throw new CliError(message, /is using the data folder/.test(message) ? EXIT.unavailable : EXIT.failed)
  }
  return inProcess(host)
}

function inProcess(host: Host): HostLink {
  return {
    via: 'in-process',
    request: async (method, params) => answerOf(method, await host.handle(method, params)),
    subscribe: (listener) => host.events.subscribe(listener),
    close: () => host.close()
  }
}
