import { statSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { newSession, openFolder, openSession } from './app'
import { dataFolder } from './data-folder'
import { CliError, EXIT } from './exit-codes'
import { listSessions, searchHistory } from './listing'
import type { Streams } from './output'
import { ALLOW_POLICIES, type AllowPolicy } from './permissions'
import { projectAdder } from './resolve'
import { runTurn } from './run'
import { canAsk, question } from './terminal'
import { readVersion } from '../web/version'

/**
 * The `switchboard` command (bin/switchboard.mjs runs this bundle,
 * out/main/cli.js): headless runs, listing and search on the Host of a data
 * folder. Everything it is given is checked before the data folder is
 * touched: bad input is a line on stderr and a usage exit code, nothing written.
 */

export const USAGE = `Usage:
  switchboard [FOLDER]                         open FOLDER (default: this one) as a project in the app, starting it if needed
  switchboard --new [--agent A | --preset P] [--worktree] [--project DIR] "PROMPT"
                                               a new session in the app, with that prompt
  switchboard open SESSION                     show that session in the app
  switchboard run (--agent A | --preset P) [--project DIR] [--json] [--allow ask|never|rules] "PROMPT"
  switchboard run --continue SESSION [--json] [--allow ask|never|rules] "PROMPT"
  switchboard ls [--project P] [--json]
  switchboard search "TEXT" [--json]
  switchboard --version | --help

  run        one turn without a window, in the same history as the app; the reply goes to stdout
             (--json: the transcript's records, one JSON object a line). PROMPT "-" or left out: read from stdin.
  --agent    an agent by name or id; --preset: a session preset by name or id
  --project  the folder to work in (default: the current folder); added as a project when it is new
  --continue the next turn of that session (its agent and folder)
  --allow    what the agent may do when it asks: ask (on a terminal; the default there), never (deny every
             request; the default without a terminal), rules (your saved "always" rules, deny the rest)
  --data-dir the data folder (default: $SWITCHBOARD_DATA_DIR, else the app's)

Exit codes: 0 finished, 1 failed, 2 bad command line, 3 refused, 4 cancelled, 5 a permission denied,
6 stopped at a limit, 7 the data folder is held by a Switchboard this command cannot reach, 8 the agent's secrets
are in the app's keychain and the app is not running (start it, or pass them as variables).`

export async function main(argv: string[], streams: Streams): Promise<number> {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    streams.out(`${USAGE}\n`)
    return EXIT.ok
  }
  if (command === '--version' || command === '-v') {
    streams.out(`switchboard ${readVersion()}\n`)
    return EXIT.ok
  }
  if (command === undefined || !['run', 'ls', 'search', 'open'].includes(command)) return appCommand(argv, streams)
  const { values, positionals } = parse(rest, command)
  const dataDir = dataFolder(values['data-dir'] as string | undefined)
  const json = values.json === true
  switch (command) {
    case 'run':
      return runCommand(values, positionals, dataDir, streams)
    case 'ls':
      if (positionals.length > 0) throw new CliError(`ls takes no ${positionals[0]}: use --project to choose a project.`, EXIT.usage)
      return listSessions({ dataDir, project: values.project as string | undefined, json }, streams)
    case 'search':
      if (positionals.length !== 1) throw new CliError('search takes the text to find, in quotes: switchboard search "flaky test".', EXIT.usage)
      return searchHistory({ dataDir, text: positionals[0] as string, json }, streams)
    default:
      // open
      if (positionals.length !== 1) throw new CliError('open takes the id of a session (switchboard ls lists them).', EXIT.usage)
      return openSession(dataDir, positionals[0] as string, streams)
  }
}

/** `switchboard [FOLDER]` and `switchboard --new …`: the app, told what to show. */
async function appCommand(argv: string[], streams: Streams): Promise<number> {
  const isNew = argv[0] === '--new'
  const { values, positionals } = parse(isNew ? argv.slice(1) : argv, isNew ? '--new' : 'folder')
  const dataDir = dataFolder(values['data-dir'] as string | undefined)
  const adder = projectAdder(async () =>
    canAsk() ? question('The running Switchboard printed a code to confirm adding the project; type it: ') : null
  )
  if (!isNew) {
    if (positionals.length > 1) throw new CliError(`One folder at a time (got ${positionals.length}).\n${USAGE}`, EXIT.usage)
    return openFolder(dataDir, positionals[0] ?? '.', adder, streams)
  }
  if (values.agent !== undefined && values.preset !== undefined) throw new CliError('--new takes --agent or --preset, not both.', EXIT.usage)
  if (positionals.length > 1) throw new CliError('Give the prompt as one argument, in quotes.', EXIT.usage)
  const prompt = await promptText(positionals[0])
  return newSession(
    {
      dataDir,
      folder: (values.project as string | undefined) ?? '.',
      agent: values.agent as string | undefined,
      preset: values.preset as string | undefined,
      worktree: values.worktree === true,
      prompt
    },
    adder,
    streams
  )
}

const OPTIONS = {
  run: ['agent', 'preset', 'project', 'continue', 'json', 'allow', 'data-dir'],
  ls: ['project', 'json', 'data-dir'],
  search: ['json', 'data-dir'],
  open: ['data-dir'],
  '--new': ['agent', 'preset', 'project', 'worktree', 'data-dir'],
  folder: ['data-dir']
} as const

function parse(args: string[], command: string): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const names: readonly string[] = OPTIONS[command as keyof typeof OPTIONS] ?? []
  const all = {
    agent: { type: 'string' },
    preset: { type: 'string' },
    project: { type: 'string' },
    continue: { type: 'string' },
    allow: { type: 'string' },
    json: { type: 'boolean' },
    worktree: { type: 'boolean' },
    'data-dir': { type: 'string' }
  } as const
  const options = Object.fromEntries(Object.entries(all).filter(([name]) => names.includes(name)))
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${USAGE}`, EXIT.usage)
  }
}

async function runCommand(
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  dataDir: string,
  streams: Streams
): Promise<number> {
  const agent = values.agent as string | undefined
  const preset = values.preset as string | undefined
  const continueId = values.continue as string | undefined
  if (continueId !== undefined && (agent !== undefined || preset !== undefined || values.project !== undefined)) {
    throw new CliError('--continue goes on in that session, with its agent and folder: leave out --agent, --preset and --project.', EXIT.usage)
  }
  if (continueId === undefined && (agent === undefined) === (preset === undefined)) {
    throw new CliError('run needs one agent to talk to: --agent NAME or --preset NAME (or --continue SESSION).', EXIT.usage)
  }
  const allow = (values.allow as string | undefined) ?? (canAsk() ? 'ask' : 'never')
  if (!(ALLOW_POLICIES as readonly string[]).includes(allow)) {
    throw new CliError(`--allow takes ask, never or rules (got '${allow}').`, EXIT.usage)
  }
  if (allow === 'ask' && !canAsk()) {
    throw new CliError('--allow ask needs a terminal to ask on: use --allow never or --allow rules here.', EXIT.usage)
  }
  const project = projectFolder(values.project as string | undefined)
  if (positionals.length > 1) throw new CliError('Give the prompt as one argument, in quotes.', EXIT.usage)
  const prompt = await promptText(positionals[0])
  const adder = projectAdder(async () =>
    canAsk() ? question('The running Switchboard printed a code to confirm adding the project; type it: ') : null
  )
  return runTurn({ dataDir, prompt, agent, preset, project, continueId, json: values.json === true, allow: allow as AllowPolicy }, streams, adder)
}

/** The folder to work in: absolute, existing, a folder. A relative path is taken from the current folder, as a shell would. */
function projectFolder(given: string | undefined): string {
  const folder = resolve(given ?? '.')
  let isFolder = false
  try {
    isFolder = statSync(folder).isDirectory()
  } catch {
    throw new CliError(`The project folder ${folder} does not exist.`, EXIT.usage)
  }
  if (!isFolder) throw new CliError(`${folder} is a file, not a folder: --project takes the folder to work in.`, EXIT.usage)
  if (!isAbsolute(folder)) throw new CliError(`The project folder must be an absolute path (got '${given}').`, EXIT.usage)
  return folder
}

/** The prompt from the command line, or from stdin (`-`, or none given while stdin is not a terminal). */
async function promptText(given: string | undefined): Promise<string> {
  let text = given
  if (text === undefined || text === '-') {
    if (process.stdin.isTTY) throw new CliError('run needs a prompt: switchboard run --agent NAME "what to do".', EXIT.usage)
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    text = Buffer.concat(chunks).toString('utf8')
  }
  if (text.trim() === '') throw new CliError('The prompt is empty: nothing was sent.', EXIT.usage)
  return text
}

// A reader that stopped reading (`switchboard ls | head`) is not an error of the command's.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok)
  throw error
})

main(process.argv.slice(2), { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) }).then(
  (code) => leave(code),
  (error: Error) => {
    process.stderr.write(`switchboard: ${error.message}\n`)
    leave(error instanceof CliError ? error.code : EXIT.failed)
  }
)

/** Exits once stdout is written out: nothing the Host left behind (a timer, a socket closing) holds the command open. */
function leave(code: number): void {
  process.exitCode = code
  process.stdout.write('', () => process.exit(code))
}
