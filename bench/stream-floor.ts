import { spawn } from 'node:child_process'
import { Readable, Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk'
import type { Browser } from 'playwright-core'
import { WebSocketServer, type WebSocket } from 'ws'
import { scriptedAgentCommand } from '../test/agent/spawn'
import { agentEnv, rate } from './agents'
import { until } from './lib'

/**
 * The stream figure's floor: what any window can do with the same stream on
 * the same machine. The bare SDK client (the figure's baseline) reads the
 * scripted agent's `/stream N` and forwards each `session/update` it gets, as
 * JSON, a batch at most every 16 ms (as the Host's event bus does), over a
 * loopback WebSocket to a bare page: no framework, no store, no transcript,
 * no markdown, no virtual list. The page appends the chunks' text to `<pre>`
 * pieces of 8,000 characters (the window's plain text pieces, laid out only
 * in view, `content-visibility: auto`) once a frame and keeps the end in view,
 * as the window follows a stream. Timed as the window is: from the frame that
 * shows `chunk 1` to the frame that shows `chunk N`, in page time.
 */

const PAGE = `<!doctype html><html><body style="margin:0;font:14px/1.5 system-ui,sans-serif;display:flex">
<aside style="width:260px;flex:none"></aside>
<div id="scroll" style="flex:1;overflow:auto;height:100vh;padding:20px 24px;box-sizing:border-box"></div>
<style>pre{margin:0;font:12.5px/1.45 monospace;white-space:pre-wrap;overflow-wrap:anywhere;content-visibility:auto;contain-intrinsic-size:auto 60em}</style>
</body></html>`

export async function streamFloor(browser: Browser, chunks: number, cwd: string): Promise<number> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const connected = new Promise<WebSocket>((resolve) => server.once('connection', resolve))
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const { command, args } = scriptedAgentCommand()
  const child = spawn(command, args, { env: { ...process.env, ...agentEnv(null) }, stdio: ['pipe', 'pipe', 'inherit'] })
  try {
    const page = await context.newPage()
    await page.setContent(PAGE)
    await page.evaluate(`(() => {
      const w = (window.__floor = { first: 0, last: 0 })
      const scroll = document.getElementById('scroll')
      const needle = ${JSON.stringify(`chunk ${chunks} `)}
      let node = null
      let pending = ''
      let frame = 0
      const show = (t) => {
        frame = 0
        while (pending) {
          if (!node || node.length >= 8000) node = scroll.appendChild(document.createElement('pre')).appendChild(document.createTextNode(''))
          const room = Math.max(1, 8000 - node.length)
          node.appendData(pending.slice(0, room))
          pending = pending.slice(room)
        }
        scroll.scrollTop = scroll.scrollHeight
        if (!w.first) w.first = t
        if (node.data.endsWith(needle)) w.last = t
      }
      const socket = new WebSocket(${JSON.stringify(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`)})
      socket.onmessage = (message) => {
        for (const update of JSON.parse(message.data)) pending += update.update.content.text
        if (!frame) frame = requestAnimationFrame(show)
      }
    })()`)
    const socket = await connected
    let batch: unknown[] = []
    let timer: NodeJS.Timeout | null = null
    let lastSent = 0
    const send = (): void => {
      timer = null
      lastSent = Date.now()
      const out = batch
      batch = []
      socket.send(JSON.stringify(out))
    }
    const app = client({ name: 'bench-floor' }).onNotification(methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate !== 'agent_message_chunk') return
      batch.push(params)
      timer ??= setTimeout(send, Math.max(0, lastSent + 16 - Date.now()))
    })
    const connection = app.connect(
      ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)
    )
    try {
      await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} })
      const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })
      await connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: `/stream ${chunks}` }] })
      const shown = async (): Promise<boolean> => {
        if (((await page.evaluate('window.__floor.last')) as number) > 0) return true
        await new Promise((r) => setTimeout(r, 100))
        return false
      }
      await until(shown, 'the bare page to show the last chunk', 600_000)
      const { first, last } = (await page.evaluate('window.__floor')) as { first: number; last: number }
      return rate(chunks, first, last)
    } finally {
      connection.close()
    }
  } finally {
    child.kill()
    await context.close()
    server.close()
  }
}
