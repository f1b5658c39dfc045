import type { IPty } from '@lydell/node-pty'

/**
 * On Windows, node-pty reads the console's output in a Worker thread it starts
 * from a script in its own folder (windowsConoutConnection.js) and keeps to
 * itself, with no error handler. A Worker that fails (its script missing from
 * a packaged build, electron-builder.yml's asarUnpack) would be an error
 * nothing catches in the Host's process. This finds that Worker, where there
 * is one, and hands its error to `listener`; true when it found it. Elsewhere
 * (macOS, Linux: no Worker) it does nothing.
 */
export function onConoutWorkerError(pty: IPty, listener: (error: Error) => void): boolean {
  const worker = (pty as unknown as PtyInternals)._agent?._conoutSocketWorker?._worker
  if (typeof worker?.on !== 'function') return false
  worker.on('error', listener)
  return true
}

/** The private fields of node-pty 1.x's WindowsTerminal that lead to the Worker (windowsPtyAgent.js, windowsConoutConnection.js). */
interface PtyInternals {
  _agent?: { _conoutSocketWorker?: { _worker?: { on?: (event: 'error', listener: (error: Error) => void) => unknown } } }
}
