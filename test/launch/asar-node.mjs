// Node standing in for Electron run as Node (ELECTRON_RUN_AS_NODE=1) in the packaging test: Electron reads a script
// inside app.asar as if the archive were a folder, with its unpacked files beside it. Here the archive is extracted
// once (with its .unpacked files laid over it) and the same path inside it is run, its arguments as given. The packaging
// test extracts it into the same folder first, and checks the bundles' imports there too.
import { cpSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as asar from '@electron/asar'

const [script, ...args] = process.argv.slice(2)
const at = script.search(/\.asar[\\/]/)
let path = script
if (at !== -1) {
  const archive = script.slice(0, at + '.asar'.length)
  const extracted = `${archive}.as-folder`
  if (!existsSync(extracted)) {
    mkdirSync(extracted, { recursive: true })
    asar.extractAll(archive, extracted)
    if (existsSync(`${archive}.unpacked`)) cpSync(`${archive}.unpacked`, extracted, { recursive: true })
  }
  path = join(extracted, script.slice(at + '.asar/'.length))
}
process.argv = [process.argv[0], path, ...args]
await import(pathToFileURL(path).href)
