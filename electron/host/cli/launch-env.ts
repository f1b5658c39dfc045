/**
 * The environment by which a launcher tells the command how it was started (no imports: the shell's relay,
 * electron/cli-relay.ts, reads these too).
 */

/**
 * How the app is started: a JSON array, the program then its arguments, set by the checkout's launcher
 * (bin/switchboard.mjs) or the AppImage's relay (electron/cli-relay.ts). Unset in a packaged command run by the app's
 * own Electron as Node (build/bin/): that Electron is the app.
 */
export const APP_COMMAND_ENV = 'SWITCHBOARD_APP_COMMAND'

/** Set by the command an AppImage's "Install the switchboard Command" writes: the app relays to the command. */
export const RELAY_ENV = 'SWITCHBOARD_CLI'
