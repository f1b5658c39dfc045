import { describe, expect, it } from 'vitest'
import { explainingLines, lastLines } from '../../shared/stderr-lines'

/** What agents and their runtimes really print when they fail (paths shortened). */

const NODE_ESM_MISSING_PACKAGE = `node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'tsx' imported from /home/me/agent/bin/agent.mjs
    at packageResolve (node:internal/modules/esm/resolve:873:9)
    at moduleResolve (node:internal/modules/esm/resolve:946:18)
    at defaultResolve (node:internal/modules/esm/resolve:1188:11)
    at ModuleLoader.defaultResolve (node:internal/modules/esm/loader:708:12)
    at #cachedDefaultResolve (node:internal/modules/esm/loader:657:25)
    at ModuleLoader.resolve (node:internal/modules/esm/loader:640:38)
    at ModuleLoader.getModuleJobForImport (node:internal/modules/esm/loader:264:38)
    at ModuleJob._link (node:internal/modules/esm/module_job:168:49) {
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v20.20.2
`

const NODE_CJS_MISSING_MODULE = `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/home/me/agent/dist/index.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2
`

const PYTHON_TRACEBACK = `Traceback (most recent call last):
  File "/home/me/agent/main.py", line 3, in <module>
    import acp
ModuleNotFoundError: No module named 'acp'
`

const NPX_OFFLINE = `npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://registry.npmjs.org/@google%2fgemini-cli failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org
npm error network This is a problem related to network connectivity.
npm error network In most cases you are behind a proxy or have bad network settings.
npm error network
npm error network If you are behind a proxy, please make sure that the
npm error network 'proxy' config is set properly.  See: 'npm help config'
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-25T09_00_00_000Z-debug-0.log
`

const RUST_PANIC = `thread 'main' panicked at src/main.rs:12:5:
config.toml: permission denied (os error 13)
note: run with \`RUST_BACKTRACE=1\` environment variable to display a backtrace
`

describe('the stderr lines that explain a failure', () => {
  it("finds Node's message above the frames, not the frames, the source excerpt or the version", () => {
    expect(explainingLines(NODE_ESM_MISSING_PACKAGE)).toEqual([
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'tsx' imported from /home/me/agent/bin/agent.mjs"
    ])
    // The last lines, which is what a tail shows, say nothing of it.
    expect(lastLines(NODE_ESM_MISSING_PACKAGE, 4).join('\n')).not.toContain('Cannot find package')
    expect(explainingLines(NODE_CJS_MISSING_MODULE)).toEqual(["Error: Cannot find module '/home/me/agent/dist/index.js'"])
  })

  it("finds Python's exception, not the traceback's header, frames or source", () => {
    expect(explainingLines(PYTHON_TRACEBACK)).toEqual(["ModuleNotFoundError: No module named 'acp'"])
  })

  it('takes the first lines of a long complaint, each once', () => {
    const found = explainingLines(NPX_OFFLINE)
    expect(found).toHaveLength(6)
    expect(found[0]).toBe('npm error code ENOTFOUND')
    expect(found).toContain(
      'npm error network request to https://registry.npmjs.org/@google%2fgemini-cli failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org'
    )
    expect(explainingLines('Error: boom\nError: boom\nError: boom\n')).toEqual(['Error: boom'])
    expect(explainingLines(NPX_OFFLINE, 2)).toEqual(['npm error code ENOTFOUND', 'npm error syscall getaddrinfo'])
  })

  it('a line ending in a colon brings the next (a Rust panic and its message)', () => {
    expect(explainingLines(RUST_PANIC)).toEqual(["thread 'main' panicked at src/main.rs:12:5:", 'config.toml: permission denied (os error 13)'])
  })

  it('the message of a stack trace counts even when it names no error', () => {
    expect(explainingLines('starting up\nthe socket went away\n    at Socket.onClose (/app/x.js:1:1)\n')).toEqual(['the socket went away'])
  })

  it('plain words of failure: permission denied, ENOENT, could not, refused', () => {
    const log = [
      'agent 1.2.0 listening on stdio',
      'loading config from /home/me/.agent',
      'open /home/me/.agent/token: permission denied',
      'spawn rg ENOENT',
      'connection refused by 127.0.0.1:8080',
      'ready'
    ].join('\n')
    expect(explainingLines(log)).toEqual(['open /home/me/.agent/token: permission denied', 'spawn rg ENOENT', 'connection refused by 127.0.0.1:8080'])
  })

  it('warnings only when nothing else explains it; nothing when nothing does', () => {
    const warning = 'WARNING: proceeding, even though we could not update PATH: Refusing to create helper binaries under temporary dir "/tmp"'
    expect(explainingLines(`${warning}\nError: the key was refused\n`)).toEqual(['Error: the key was refused'])
    expect(explainingLines(`${warning}\n`)).toEqual([warning])
    expect(explainingLines('starting claude-agent-acp\nlistening\n')).toEqual([])
    expect(explainingLines('')).toEqual([])
  })

  it('terminal colours and progress rewrites are removed', () => {
    expect(explainingLines('\u001b[31mError:\u001b[0m \u001b[1mbad token\u001b[0m\n')).toEqual(['Error: bad token'])
    expect(explainingLines('downloading 10%\rdownloading 90%\rdownload failed: connection reset\n')).toEqual(['download failed: connection reset'])
    expect(lastLines('a\n\nb\n  c  \n', 2)).toEqual(['b', 'c'])
  })
})
