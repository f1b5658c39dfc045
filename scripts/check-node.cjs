/*
 * Says, before anything else runs, when this Node.js is too old for Switchboard's commands.
 *
 * Vite and electron-vite need Node.js ^20.19.0 || >=22.12.0 (and the download of Electron's
 * binary needs require() of ES modules, which Node.js has from 20.19 on). An older Node.js
 * would fail deep inside them with a syntax or module error, so `npm start`, `npm run dev` and
 * `npm run dist` run this first. It is written in the plain syntax every Node.js parses (ES5, checked
 * by test/unit/check-node.test.ts and by ESLint), so that a very old one still gets to say what is wrong.
 */
// @ts-check
'use strict'

var NEEDED = 'Node.js 22.12 or later (or 20.19 or later on Node.js 20)'

/**
 * Why `version` (such as "v18.19.0" or "20.19.0") cannot run Switchboard, or null when it can.
 * @param {string} version
 * @returns {string | null}
 */
function nodeVersionProblem(version) {
  var match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(version))
  if (!match) return 'Switchboard needs ' + NEEDED + ', and cannot tell which version this Node.js (' + version + ') is.'
  var major = Number(match[1])
  var minor = Number(match[2])
  var supported = (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major >= 23
  if (supported) return null
  return (
    'Switchboard needs ' +
    NEEDED +
    '; this is Node.js ' +
    match[0].replace(/^v/, '') +
    '.\nInstall a current Node.js (an LTS release from https://nodejs.org, or through nvm, fnm or your package manager), then run the command again.'
  )
}

module.exports = { nodeVersionProblem: nodeVersionProblem }

if (require.main === module) {
  var problem = nodeVersionProblem(process.version)
  if (problem) {
    process.stderr.write('\n' + problem + '\n(Node.js found at ' + process.execPath + ')\n\n')
    process.exit(1)
  }
}
