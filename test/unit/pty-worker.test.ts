import { EventEmitter } from 'node:events'
import { Worker } from 'node:worker_threads'
import type { IPty } from '@lydell/node-pty'
import { describe, expect, it } from 'vitest'
import { onConoutWorkerError } from '../../electron/host/agents/pty-worker'

/**
 * node-pty's console reader on Windows is a Worker it keeps private (windowsConoutConnection.js): its error reaches
 * the sign-in (electron/host/agents/pty-worker.ts) instead of the Host's last-resort handler. Windows is not here:
 * the terminal is shaped as node-pty 1.x's WindowsTerminal is, around a real Worker whose script is missing, as in
 * a packaged build that left it inside app.asar.
 */
describe('the error handler on node-pty’s console Worker', () => {
  it('hears the Worker fail to load its script', async () => {
    const worker = new Worker('/nowhere/worker/conoutSocketWorker.js')
    const pty = { _agent: { _conoutSocketWorker: { _worker: worker } } } as unknown as IPty
    const failed = new Promise<Error>((resolve) => expect(onConoutWorkerError(pty, resolve)).toBe(true))
    expect((await failed).message).toContain('conoutSocketWorker.js')
  })

  it('does nothing where node-pty has no Worker (macOS, Linux)', () => {
    const unixTerminal = Object.assign(new EventEmitter(), { pid: 1 }) as unknown as IPty
    expect(onConoutWorkerError(unixTerminal, () => undefined)).toBe(false)
  })
})
