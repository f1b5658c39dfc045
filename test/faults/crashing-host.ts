/**
 * A host that will be killed (crashed-host.test.ts): opens the data folder,
 * starts a session whose agent leaves a command running in a terminal, says
 * `ready`, and waits to be SIGKILLed.
 *
 * Usage: node --import tsx crashing-host.ts DATADIR PROJECTDIR STATEDIR PIDFILE
 */
import { Host } from '../../electron/host/host'
import { allowCommands, confirmEverything, scriptedAgent } from '../helpers'

const [dataDir, projectDir, stateDir, pidFile] = process.argv.slice(2)

async function main(): Promise<void> {
  const host = await Host.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], agentIdleMs: 0 })
  const project = await host.request('projects.add', { cwd: projectDir })
  const agent = await host.request('agents.add', scriptedAgent(stateDir))
  const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
  allowCommands(host)
  await host.request('sessions.prompt', { id: record.id, text: `/terminal-leave sh -c 'echo $$ > ${pidFile}; exec sleep 600'` })
  process.stdout.write('ready\n')
  setInterval(() => undefined, 60_000)
}

main().catch((error: Error) => {
  process.stderr.write(`crashing-host: ${error.stack ?? error.message}\n`)
  process.exit(2)
})
