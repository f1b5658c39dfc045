import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Linter } from 'eslint'
import { describe, expect, it } from 'vitest'
import { nodeVersionProblem } from '../../scripts/check-node.cjs'

/** The Node.js check `npm start` (and the other commands) run first: vite and electron-vite need ^20.19.0 || >=22.12.0. */

describe('the Node.js version check', () => {
  it.each(['20.19.0', 'v20.20.2', '22.12.0', 'v22.22.1', '23.0.0', '24.11.1', '26.1.0'])('accepts %s', (version) => {
    expect(nodeVersionProblem(version)).toBeNull()
  })

  it.each([
    ['v16.20.2', '16.20.2'],
    ['v18.20.4', '18.20.4'],
    ['v20.18.3', '20.18.3'],
    ['v21.7.3', '21.7.3'],
    ['v22.11.0', '22.11.0']
  ])('names %s as too old and says what is needed', (version, shown) => {
    const problem = nodeVersionProblem(version)
    expect(problem).toContain('Switchboard needs Node.js 22.12 or later (or 20.19 or later on Node.js 20)')
    expect(problem).toContain(`this is Node.js ${shown}.`)
    expect(problem).toContain('https://nodejs.org')
  })

  it('says so when it cannot read the version', () => {
    expect(nodeVersionProblem('banana')).toContain('cannot tell which version this Node.js (banana) is')
  })

  it('is written in ES5, so that the oldest Node.js parses it and gets to say it is too old', () => {
    const source = readFileSync(resolve(import.meta.dirname, '../../scripts/check-node.cjs'), 'utf8')
    const es5 = new Linter().verify(source, { languageOptions: { ecmaVersion: 5, sourceType: 'script' } })
    expect(es5.filter((m) => m.fatal)).toEqual([])
    // The check itself can fail: the same parser refuses what old engines cannot read.
    const arrow = new Linter().verify('var f = () => 1', { languageOptions: { ecmaVersion: 5, sourceType: 'script' } })
    expect(arrow.filter((m) => m.fatal)).toHaveLength(1)
  })
})
