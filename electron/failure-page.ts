import type { HostFailure } from './host/host-process/host-supervisor'

/** The page shown in place of the window's when the Host will not be started again: why, and where its log is (a data: URL). */
export function failurePage({ cause, logFile }: HostFailure): string {
  const escape = (text: string): string =>
    text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c)
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Switchboard could not start</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>body{font:14px system-ui,sans-serif;margin:3em;max-width:50em;color:#222}pre{white-space:pre-wrap;background:#f4f4f4;padding:1em}</style></head>
<body><h1>Switchboard could not start its host</h1><p>The part of Switchboard that runs your agents and keeps your data stopped, and was not started again.</p>
<pre id="cause">${escape(cause)}</pre><p>Its log: <code id="log">${escape(logFile)}</code></p>
<p>Fix what the log names (or move the file it names aside), then open Switchboard again.</p></body></html>`
  return `data:text/html;charset=utf-8,${encodeURIComponent(html)}`
}
