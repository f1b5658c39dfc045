import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { scriptedTransport } from '../test/agent/spawn'
import { agentEnv } from './agents'
import { until } from './lib'
import { procStatusMb, startServe } from './processes'

/**
 * Host memory: the headless Host as shipped (`node out/main/serve.js`, which forks the Host's process and
 * supervises it), driven over its WebSocket like the renderer drives it; the Host's resident set size is read from
 * /proc (VmRSS now, VmHWM the peak), so nothing of the benchmark or of serve's supervisor counts.
 */

export interface HostMemory {
  idle: number
  peak: number
  after: number
}

/** RSS of the serve.js Host: idle, peak while `agents` sessions each stream `chunks` chunks at once, and after. */
export async function hostMemory(root: string, agents: number, chunks: number): Promise<HostMemory> {
  await mkdir(join(root, 'project'), { recursive: true })
  const served = await startServe(join(root, 'data'))
  try {
    const { client } = served
    let done = 0
    const project = await served.confirmed<{ id: string }>('projects.add', { cwd: join(root, 'project') })
    const agentIds: string[] = []
    for (let i = 0; i < agents; i++) {
      agentIds.push(
        (await served.confirmed<{ id: string }>('agents.add', { name: `Scripted ${i}`, transport: scriptedTransport(agentEnv(null)) })).id
      )
    }
    await new Promise((r) => setTimeout(r, 500))
    const idle = procStatusMb(served.host, 'VmRSS')
    const sessions = await Promise.all(agentIds.map((agentId) => client.request<{ id: string }>('sessions.new', { projectId: project.id, agentId })))
    await Promise.all(sessions.map((s) => client.request('sessions.prompt', { id: s.id, text: `/stream ${chunks}` }).then(() => (done += 1))))
    await until(() => done === agents, 'every session to finish streaming')
    const peak = procStatusMb(served.host, 'VmHWM')
    await new Promise((r) => setTimeout(r, 1000))
    const after = procStatusMb(served.host, 'VmRSS')
    return { idle, peak, after }
  } finally {
    await served.close()
  }
}
