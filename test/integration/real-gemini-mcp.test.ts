import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { waitUntil } from '../helpers'
import { tinyServerCommand } from '../mcp/tiny-server'
import { threadReader } from '../real/thread'
import { addGeminiAgent, offlineGeminiPerTest } from '../real/gemini'

/**
 * Real Gemini CLI (`--acp`, offline against test/real/fake-gemini.ts) given an
 * MCP server in a folder it does not trust: its folder trust is left on, as it
 * is by default. Gemini CLI then starts none of the servers and says nothing;
 * the session says so, the app trusts the folder in Gemini CLI's own file, and
 * after a restart the model is offered the server's tool and runs it.
 */

/** Gemini CLI's folder trust left to its default (on), unlike real-gemini.test.ts. */
const run = offlineGeminiPerTest({ prefix: 'gemini-mcp', folderTrust: true })
const { answer } = threadReader(() => run.host, 'Gemini CLI')

/** The names of the tools the model was offered in the last streamed request. */
function toolsOffered(): string[] {
  return (run.api.streamed().at(-1)?.body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name))
}

const mcpRunOf = async (id: string) => (await run.host.request('sessions.states', {})).find((s) => s.id === id)?.mcpRun

describe('real Gemini CLI and MCP servers in a folder it does not trust', () => {
  it('says Gemini CLI starts none of them; trusting the folder in its file and restarting it gives the model the tools', async () => {
    const agentId = await addGeminiAgent(run)
    const projectId = (await run.host.request('projects.add', { cwd: run.project })).id
    const tiny = tinyServerCommand()
    await run.host.request('mcp.save', { name: 'tiny', transport: 'stdio', command: tiny.command, args: tiny.args, env: [] })
    // A server that exits at start (no token): Gemini CLI leaves no trace of it anywhere a client can see.
    await run.host.request('mcp.save', {
      name: 'crashy',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'wanted' }]
    })
    // The user's own rule for another folder, which the app must keep.
    const trustFile = join(run.home, '.gemini', 'trustedFolders.json')
    await writeFile(trustFile, JSON.stringify({ [join(run.root, 'elsewhere')]: 'DO_NOT_TRUST' }, null, 2))

    const id = (await run.host.request('sessions.new', { projectId, agentId })).id
    const untrusted = await mcpRunOf(id)
    expect(untrusted?.untrustedFolder).toMatchObject({ agent: 'Gemini CLI', folder: run.project, file: trustFile })
    const notStarted = { state: 'not_started', reason: expect.stringContaining('Gemini CLI does not start MCP servers in folders it does not trust') }
    expect(untrusted?.servers).toEqual([
      { name: 'tiny', ...notStarted },
      { name: 'crashy', ...notStarted }
    ])
    // Indeed: the model is offered no tool of the server.
    expect(await run.host.request('sessions.prompt', { id, text: 'hello' })).toEqual({ stopReason: 'end_turn' })
    expect(toolsOffered()).toContain('read_file')
    expect(toolsOffered().filter((t) => t.startsWith('mcp_'))).toEqual([])

    const { file } = await run.host.request('sessions.trustFolderForMcp', { id })
    expect(file).toBe(trustFile)
    expect(JSON.parse(await readFile(trustFile, 'utf8'))).toEqual({ [join(run.root, 'elsewhere')]: 'DO_NOT_TRUST', [run.project]: 'TRUST_FOLDER' })
    if (process.platform !== 'win32') expect((await stat(trustFile)).mode & 0o777).toBe(0o600)
    expect((await mcpRunOf(id))?.untrustedFolder).toMatchObject({ restartNeeded: true })

    // Restarted: Gemini CLI trusts the folder and starts the server. A new session is started here: Gemini CLI 0.61
    // cannot session/load a conversation within the minute it began ("No previous sessions found for this project",
    // trusted or not; see real-gemini.test.ts), and the app offers such a conversation in a new session anyway.
    await run.host.request('agents.restart', { agentId })
    const next = (await run.host.request('sessions.new', { projectId, agentId })).id
    const trusted = await mcpRunOf(next)
    expect(trusted?.untrustedFolder).toBeUndefined()
    const notReported = { state: 'not_reported', reason: expect.stringMatching(/^not reported by the agent/) }
    expect(trusted?.servers).toEqual([
      { name: 'tiny', ...notReported },
      { name: 'crashy', ...notReported }
    ])
    const turn = run.host.request('sessions.prompt', { id: next, text: 'CALL mcp_tiny_echo {"text":"hi from the model"}' })
    await answer(next, 'allow')
    expect(await turn).toEqual({ stopReason: 'end_turn' })
    expect(toolsOffered()).toContain('mcp_tiny_echo')
    expect(toolsOffered().filter((t) => t.startsWith('mcp_crashy'))).toEqual([])
    await waitUntil('the server shown started', async () => (await mcpRunOf(next))?.servers[0]?.state === 'started')
    // The server that exited is not claimed started: Gemini CLI 0.61 says nothing of it (stderr, even with --debug,
    // and ACP alike), so it stays not reported.
    expect((await mcpRunOf(next))?.servers).toEqual([
      { name: 'tiny', state: 'started', reason: 'its tool echo ran' },
      { name: 'crashy', ...notReported }
    ])
  }, 120_000)
})
