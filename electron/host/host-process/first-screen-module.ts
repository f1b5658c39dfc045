import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { FirstScreenRenderer } from '../../../shared/contract'

/**
 * The window's first screen for HostOptions.firstScreen: the module the build writes beside the Host's own
 * (out/main/first-screen.js, renderer/src/first-screen.ts compiled for the server renderer), loaded at once,
 * in the background, so that the window's first request finds it ready. Undefined when the build has none
 * (the Host then answers `app.firstScreen` with null and the window draws its first screen itself).
 */
export function firstScreenModule(file: string): FirstScreenRenderer | undefined {
  if (!existsSync(file)) return undefined
  const loading = import(pathToFileURL(file).href).then((module: { renderFirstScreen: FirstScreenRenderer }) => module.renderFirstScreen)
  // A module that cannot load fails each request (the Host answers null): not an unhandled rejection meanwhile.
  loading.catch(() => undefined)
  return async (input) => (await loading)(input)
}

/** first-screen.js beside the module at `moduleUrl` (serve.js, the desktop's index.js: all in out/main). */
export function firstScreenBeside(moduleUrl: string): FirstScreenRenderer | undefined {
  return firstScreenModule(fileURLToPath(new URL('./first-screen.js', moduleUrl)))
}
