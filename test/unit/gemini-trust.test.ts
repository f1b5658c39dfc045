import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { geminiFolderTrust, geminiTrustFile, trustFolderForGemini } from '../../electron/host/mcp/gemini-trust'
import { removeDir, tempDir } from '../helpers'

/** Gemini CLI's folder trust as Switchboard reads and writes it (the rules of Gemini CLI 0.61's trust.ts). */

let root: string
let home: string
let env: Record<string, string>
const project = () => join(root, 'work', 'project')

beforeEach(async () => {
  root = await tempDir('gemini-trust')
  home = join(root, 'home')
  await mkdir(join(home, '.gemini'), { recursive: true })
  await mkdir(project(), { recursive: true })
  // No system settings of the machine: a path that does not exist.
  env = { HOME: home, GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(root, 'no-system', 'settings.json') }
})

afterEach(() => removeDir(root))

const rules = (value: unknown) => writeFile(geminiTrustFile(env), JSON.stringify(value))

describe('geminiFolderTrust', () => {
  it('no rule: not trusted, with the file to write; folder trust off in the settings or by variable: trusted', async () => {
    expect(await geminiFolderTrust(env, project())).toMatchObject({ trusted: false, file: join(home, '.gemini', 'trustedFolders.json') })
    await writeFile(join(home, '.gemini', 'settings.json'), '{ // comments as Gemini allows\n "security": { "folderTrust": { "enabled": false } } }')
    expect(await geminiFolderTrust(env, project())).toMatchObject({ trusted: true })
    expect(await geminiFolderTrust({ ...env, GEMINI_CLI_TRUST_WORKSPACE: 'true', HOME: join(root, 'other') }, project())).toMatchObject({
      trusted: true
    })
    // Distrusted by a variable: no file can help, so none is offered.
    const restricted = await geminiFolderTrust({ ...env, GEMINI_RESTRICTED_MODE: 'true' }, project())
    expect(restricted).toEqual({ trusted: false, why: expect.stringContaining('GEMINI_RESTRICTED_MODE') })
  })

  it('the longest rule containing the folder decides; TRUST_PARENT trusts the folder beside it', async () => {
    await rules({ [join(root, 'work')]: 'TRUST_FOLDER', [project()]: 'DO_NOT_TRUST' })
    expect(await geminiFolderTrust(env, project())).toMatchObject({ trusted: false, why: expect.stringContaining('DO_NOT_TRUST') })
    expect(await geminiFolderTrust(env, join(root, 'work', 'sibling'))).toMatchObject({ trusted: true })
    await rules({ [join(root, 'work', 'sibling')]: 'TRUST_PARENT' })
    expect(await geminiFolderTrust(env, join(project(), 'deep'))).toMatchObject({ trusted: true })
    // A folder whose name only begins like a trusted one is not inside it.
    await rules({ [join(root, 'work', 'proj')]: 'TRUST_FOLDER' })
    expect(await geminiFolderTrust(env, project())).toMatchObject({ trusted: false })
  })
})

describe('trustFolderForGemini', () => {
  it('adds the folder, keeps every other rule, and trusts it from then on', async () => {
    await rules({ '/elsewhere': 'DO_NOT_TRUST' })
    await trustFolderForGemini(env, project())
    expect(JSON.parse(await readFile(geminiTrustFile(env), 'utf8'))).toEqual({ '/elsewhere': 'DO_NOT_TRUST', [project()]: 'TRUST_FOLDER' })
    expect(await geminiFolderTrust(env, project())).toMatchObject({ trusted: true })
  })

  it('a file Gemini CLI would not read is left as it is, and the error says what is wrong', async () => {
    const broken = '{ "/a": "TRUST_EVERYTHING" }'
    await writeFile(geminiTrustFile(env), broken)
    await expect(trustFolderForGemini(env, project())).rejects.toThrow(/"TRUST_EVERYTHING" for \/a, not one of TRUST_FOLDER/)
    expect(await readFile(geminiTrustFile(env), 'utf8')).toBe(broken)
    await writeFile(geminiTrustFile(env), '{ not json')
    await expect(trustFolderForGemini(env, project())).rejects.toThrow(/is not valid JSON/)
    expect(await geminiFolderTrust(env, project())).toMatchObject({ trusted: undefined })
  })

  it('waits for Gemini CLI’s own lock, and writes the file where GEMINI_CLI_TRUSTED_FOLDERS_PATH says', async () => {
    const elsewhere = join(root, 'custom', 'trust.json')
    const custom = { ...env, GEMINI_CLI_TRUSTED_FOLDERS_PATH: elsewhere }
    await mkdir(join(root, 'custom'))
    await mkdir(`${elsewhere}.lock`)
    const writing = trustFolderForGemini(custom, project())
    await new Promise((r) => setTimeout(r, 300))
    await expect(readFile(elsewhere, 'utf8')).rejects.toThrow(/ENOENT/)
    await removeDir(`${elsewhere}.lock`)
    expect(await writing).toEqual({ file: elsewhere })
    expect(JSON.parse(await readFile(elsewhere, 'utf8'))).toEqual({ [project()]: 'TRUST_FOLDER' })
  })
})
