/**
 * Misbehaviour on demand, for the hostile-agent tests: commands of the
 * scripted agent (see README.md) that write what a broken or malicious agent
 * would: huge lines, endless garbage, floods of updates, trees of processes
 * that try to outlive it, and batches of file and terminal requests with
 * hostile paths.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { methods, type AgentContext } from '@agentclientprotocol/sdk'

export interface HostileContext {
  client: AgentContext
  sessionId: string
  stateDir: string | null
  signal: AbortSignal
  message(text: string): Promise<void>
}

/** Writes to stdout, waiting while the pipe is full (the client's backpressure). */
function write(text: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve()
    else process.stdout.once('drain', () => resolve())
  })
}

function updateLine(sessionId: string, messageId: string, text: string): string {
  return (
    JSON.stringify({
      jsonrpc: '2.0',
      method: 'session/update',
      params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text } } }
    }) + '\n'
  )
}

function requireStateDir(ctx: HostileContext): string {
  if (!ctx.stateDir) throw new Error('this command needs SCRIPTED_AGENT_STATE_DIR')
  return ctx.stateDir
}

/** A shell script that starts a tree of sleeping processes, each writing its pid to a file. */
const TREE_SCRIPT = `#!/bin/sh
# tree.sh DEPTH WIDTH PIDFILE
echo $$ >> "$3"
if [ "$1" -gt 0 ]; then
  i=0
  while [ $i -lt "$2" ]; do
    sh "$0" $(($1 - 1)) "$2" "$3" &
    i=$((i + 1))
  done
fi
exec sleep 600
`

function treeSize(depth: number, width: number): number {
  let total = 0
  for (let d = 0, level = 1; d <= depth; d++, level *= width) total += level
  return total
}

async function waitForLines(file: string, count: number, signal: AbortSignal): Promise<string[]> {
  for (;;) {
    const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []
    if (lines.length >= count || signal.aborted) return lines
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Runs a hostile command; false when `name` is not one. */
export async function hostileCommand(name: string, arg: string, ctx: HostileContext): Promise<boolean> {
  switch (name) {
    case 'hugeline': {
      // One session/update of BYTES characters, as a single line.
      const bytes = Math.max(0, Number(arg) || 0)
      await write(updateLine(ctx.sessionId, 'huge', 'x'.repeat(bytes)))
      await ctx.message('after the huge line')
      return true
    }
    case 'endless-garbage': {
      // BYTES of text that is not JSON, without a newline, then the newline.
      let left = Math.max(0, Number(arg) || 0)
      const chunk = Buffer.alloc(64 * 1024, 'garbage ')
      while (left > 0) {
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left)
        await write(part)
        left -= part.length
      }
      await write('\n')
      await ctx.message('after the garbage')
      return true
    }
    case 'flood': {
      // /flood RATE STOPFILE: RATE updates a second (or as fast as the client reads) until STOPFILE exists.
      const [rateText, stopFile] = arg.split(/\s+/)
      const perSlice = Math.max(1, Math.round((Number(rateText) || 10_000) / 100))
      const started = Date.now()
      let sent = 0
      while (!existsSync(stopFile) && !ctx.signal.aborted) {
        const sliceStart = Date.now()
        let text = ''
        for (let i = 0; i < perSlice; i++) text += updateLine(ctx.sessionId, 'flood', `f${sent + i} `)
        await write(text)
        sent += perSlice
        const wait = 10 - (Date.now() - sliceStart)
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      }
      const seconds = (Date.now() - started) / 1000
      await ctx.message(`flooded ${sent} updates in ${seconds.toFixed(2)} s`)
      return true
    }
    case 'forkbomb': {
      // /forkbomb DEPTH WIDTH: a tree of sleeping processes in the agent's group, plus one of DEPTH-1 that leaves it (setsid).
      const stateDir = requireStateDir(ctx)
      const [depth, width] = arg.split(/\s+/).map((n) => Math.max(0, Math.floor(Number(n) || 0)))
      const script = join(stateDir, 'tree.sh')
      const pidFile = join(stateDir, 'forkbomb.pids')
      writeFileSync(script, TREE_SCRIPT)
      writeFileSync(pidFile, '')
      spawn('sh', [script, String(depth), String(width), pidFile], { stdio: 'ignore' }).unref()
      spawn('sh', [script, String(Math.max(0, depth - 1)), String(width), pidFile], { stdio: 'ignore', detached: true }).unref()
      const expected = treeSize(depth, width) + treeSize(Math.max(0, depth - 1), width)
      const lines = await waitForLines(pidFile, expected, ctx.signal)
      await ctx.message(`forked ${lines.length} processes`)
      return true
    }
    case 'ignore-cancel': {
      // Waits MS milliseconds whatever the client says (session/cancel included), then goes on.
      await new Promise((r) => setTimeout(r, Math.max(0, Number(arg) || 0)))
      await ctx.message('done ignoring')
      return true
    }
    case 'orphan-stdout': {
      // A grandchild that keeps the agent's stdout open after the agent is gone.
      const stateDir = requireStateDir(ctx)
      const child = spawn('sleep', ['600'], { stdio: ['ignore', 'inherit', 'ignore'] })
      child.unref()
      writeFileSync(join(stateDir, 'orphan.pid'), String(child.pid))
      await ctx.message(`orphan ${child.pid}`)
      return true
    }
    case 'fs-batch': {
      // /fs-batch FILE: FILE holds [{op: 'read'|'write'|'terminal', path}]; results go to FILE.out.json.
      const requests = JSON.parse(readFileSync(arg, 'utf8')) as { op: 'read' | 'write' | 'terminal'; path: string }[]
      const results: { op: string; path: string; ok: boolean; value?: string; exitCode?: number | null; error?: string }[] = []
      for (const { op, path } of requests) {
        try {
          if (op === 'read') {
            const { content } = await ctx.client.request(methods.client.fs.readTextFile, { sessionId: ctx.sessionId, path })
            results.push({ op, path, ok: true, value: content })
          } else if (op === 'write') {
            await ctx.client.request(methods.client.fs.writeTextFile, { sessionId: ctx.sessionId, path, content: 'written by a hostile agent\n' })
            results.push({ op, path, ok: true })
          } else {
            const { terminalId } = await ctx.client.request(methods.client.terminal.create, {
              sessionId: ctx.sessionId,
              command: 'pwd',
              args: ['-P'],
              cwd: path
            })
            const exit = await ctx.client.request(methods.client.terminal.waitForExit, { sessionId: ctx.sessionId, terminalId })
            const { output } = await ctx.client.request(methods.client.terminal.output, { sessionId: ctx.sessionId, terminalId })
            await ctx.client.request(methods.client.terminal.release, { sessionId: ctx.sessionId, terminalId })
            results.push({ op, path, ok: true, value: output, exitCode: exit.exitCode })
          }
        } catch (error) {
          results.push({ op, path, ok: false, error: (error as Error).message })
        }
      }
      writeFileSync(`${arg}.out.json`, JSON.stringify(results))
      await ctx.message(`batch done: ${results.filter((r) => r.ok).length} of ${results.length} allowed`)
      return true
    }
    default:
      return false
  }
}
