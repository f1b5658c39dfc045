import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Host } from '../electron/host/host'
import { scriptedTransport } from '../test/agent/spawn'
import { confirmEverything } from '../test/helpers'
import type { TestSshd } from '../test/ssh/sshd'
import { agentEnv } from './agents'
import type { App } from './app'

/**
 * Switchboard with the scripted agent over SSH: the tests' sshd on 127.0.0.1
 * (started by the bench), reached straight (not through the tests' relay),
 * the agent started there by the Host as any agent over SSH is, and a
 * project on that "host". The same `hostStream` measures it as the local agent.
 */
export async function openSshApp(root: string, sshd: TestSshd): Promise<App> {
  const projectDir = join(root, 'project')
  await mkdir(projectDir, { recursive: true })
  const host = await Host.open({
    dataDir: join(root, 'data'),
    version: 'bench',
    presets: [],
    initializeTimeoutMs: 60_000,
    agentIdleMs: 0,
    confirmCommand: confirmEverything
  })
  const agent = await host.request('agents.add', {
    name: 'Scripted over SSH',
    transport: { ...scriptedTransport(agentEnv(null)), kind: 'ssh', ...sshd.target({ port: sshd.sshdPort }) }
  })
  const projectId = (await host.request('projects.add', { cwd: projectDir, agentId: agent.id })).id
  return { host, projectId, agentIds: [agent.id], close: () => host.close() }
}
