#!/usr/bin/env node
'use strict'
/**
 * Runs Electronegativity (@doyensec/electronegativity) over folders of this
 * repository, offline, and prints what it found as JSON:
 *
 *   node scripts/electronegativity.cjs electron out > findings.json
 *
 * Used by test/security/electronegativity.test.ts (in `npm test`), which
 * fails on a high-severity finding or a medium one not explained.
 *
 * Offline: the tool's command line fetches translations from the web before
 * it starts, and its AVAILABLE_SECURITY_FIXES check downloads Electron's
 * release list. Here its HTTP client (`got`) is replaced by one that refuses
 * at once (the bundled en-US strings are used), that check is not run (it
 * judges the Electron version, which `npm audit` and upgrades cover, not our
 * code), and any socket opened anyway is refused and reported.
 *
 * TypeScript is read by the tool's own parsers (Babel with its `typescript`
 * plugin for .ts, esprima or Babel for the built .js); files that fail to
 * parse are reported in `errors`. It reads .js, .ts, .html and .json files
 * only (not .cjs, .mjs or .vue). The Electron version is the installed one,
 * so version-dependent defaults are judged right.
 */

const path = require('node:path')
const net = require('node:net')
const Module = require('node:module')

// The bundled en-US strings, whatever the machine's locale.
process.env.LANG = 'en-US'

const repo = path.resolve(__dirname, '..')
const inputs = process.argv.slice(2)
if (inputs.length === 0) {
  process.stderr.write('Usage: node scripts/electronegativity.cjs FOLDER... (relative to the repository)\n')
  process.exit(2)
}

/** Every attempt to reach the network, refused. */
const refused = []
const refuse = (what) => {
  refused.push(what)
  return new Error(`Refused: no network while scanning (${what})`)
}
const offlineGot = (url) => Promise.reject(refuse(`got ${String(url)}`))
offlineGot.head = offlineGot
offlineGot.get = offlineGot
// Every TCP or TLS connection (http, https, got's own) goes through this one method.
net.Socket.prototype.connect = function connect(...args) {
  throw refuse(`socket ${JSON.stringify(args[0])}`)
}

const toolDir = path.dirname(require.resolve('@doyensec/electronegativity/package.json', { paths: [repo] }))
const toolRequire = Module.createRequire(path.join(toolDir, 'dist', 'runner.js'))
const gotPath = toolRequire.resolve('got')
require.cache[gotPath] = { id: gotPath, filename: gotPath, loaded: true, exports: offlineGot }

const electronVersion = require(require.resolve('electron/package.json', { paths: [repo] })).version
const loaded = toolRequire('./runner.js')
const run = typeof loaded === 'function' ? loaded : loaded.default

async function main() {
  // The tool writes its own notes (such as "Could not retrieve updated translations") to stdout: keep them apart.
  const notes = []
  const log = console.log
  console.log = (...args) => notes.push(args.map(String).join(' '))
  const scans = []
  try {
    for (const input of inputs) {
      const result = await run(
        {
          input: path.resolve(repo, input),
          isRelative: true,
          excludeFromScan: ['AvailableSecurityFixesGlobalCheck'],
          electronVersionOverride: electronVersion,
          parserPlugins: []
        },
        false
      )
      scans.push({
        input,
        checks: result.atomicChecks + result.globalChecks,
        errors: result.errors,
        findings: result.issues.map((issue) => ({
          check: issue.id,
          file: issue.file,
          line: issue.location.line,
          severity: issue.severity.name,
          confidence: issue.confidence.name,
          description: issue.description,
          sample: issue.sample
        }))
      })
    }
  } finally {
    console.log = log
  }
  process.stdout.write(
    JSON.stringify({ tool: require(path.join(toolDir, 'package.json')).version, electronVersion, refused, notes, scans }, null, 2) + '\n'
  )
}

main().catch((error) => {
  process.stderr.write(`Electronegativity could not run: ${error && error.stack ? error.stack : String(error)}\n`)
  process.exit(1)
})
