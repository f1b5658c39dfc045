import path from 'node:path'
import { hardLinkRefusal, isInside, linesOf, MAX_READ_BYTES, normaliseRequest, PathRefusedError } from '../local-files/fs-boundary'
import { MAX_FILES, SKIPPED, type FileListing, type ProjectFile } from '../local-files/project-files'
import type { SshEndpoint } from './endpoint'
import { shQuote } from './script'

/**
 * The client side's file requests for a session whose folders are on another
 * host, answered there through its SSH connection, with the rules of
 * fs-boundary.ts: the path's form checked here (absolute, no control
 * characters, no URI…), then resolved *on the host* (`realpath` of its
 * deepest existing part, so a link there that leads out is followed), then
 * compared here with the session's folders resolved the same way. Case is
 * never folded (a host whose file system ignores case is refused more, not
 * less). Reads take regular files of at most 64 MB and one name (a hard
 * link may be a file outside under another name: refused, as here); a write
 * makes missing folders, refuses such a file, and replaces the file (a new
 * file beside it, moved over it), so it never writes through a link, even one
 * made after the check. Errors carry the errno codes the
 * local answers do (ENOENT, EISDIR, EACCES), so both are answered alike.
 */

/** Exit codes of the scripts below: what they found instead of what was asked. */
const EXIT = { missing: 111, folder: 112, notRegular: 113, tooLarge: 114, denied: 115, noFolder: 116, hardLink: 117, noRealpath: 120 } as const

/** Exits with EXIT.hardLink, the count on stderr, when the regular file "$f" has more than one name (POSIX find, no GNU or BSD stat needed). */
const REFUSE_HARD_LINK = `[ -n "$(find "$f" -prune -type f -links +1 2>/dev/null)" ] && { ls -ld -- "$f" | awk '{print $2}' >&2; exit ${EXIT.hardLink}; }`

const REALPATH = [
  `command -v realpath >/dev/null 2>&1 || { echo 'switchboard-ssh: realpath is missing' >&2; exit ${EXIT.noRealpath}; }; `,
  // realpath of the deepest part that exists, the rest appended; NUL after each.
  `rp() { p=$1; t=; while ! q=$(realpath -- "$p" 2>/dev/null); do [ "$p" = / ] && return 1; t=/\${p##*/}$t; p=\${p%/*}; [ -n "$p" ] || p=/; done; q=\${q%/}$t; printf '%s\\0' "\${q:-/}"; }; `
].join('')

/** The path to use on the host, inside one of `roots` once resolved there; throws PathRefusedError saying why not. */
export async function confineRemote(endpoint: SshEndpoint, requested: string, roots: string[]): Promise<string> {
  const lexical = normaliseRequest(requested, 'posix')
  const absoluteRoots = roots.map((root) => path.posix.resolve(root))
  const script = `${REALPATH}${[lexical, ...absoluteRoots].map((p) => `rp ${shQuote(p)} || exit 1`).join('; ')}`
  const result = await endpoint.run('resolve', script)
  if (result.code === EXIT.noRealpath) {
    throw new PathRefusedError(`Refused: ${endpoint.host} has no realpath command, which Switchboard needs to keep file requests inside the project`)
  }
  const [real, ...realRoots] = result.stdout.toString('utf8').split('\0')
  if (result.code !== 0 || realRoots.length < absoluteRoots.length) {
    throw new Error(`Could not resolve ${requested} on ${endpoint.host}: ${result.stderr.trim() || `exit code ${result.code}`}`)
  }
  if (realRoots.some((root) => isInside(root, real, 'posix', false))) return real
  throw new PathRefusedError(
    `Refused: '${requested}' is outside the session's folder${roots.length > 1 ? 's' : ''} on ${endpoint.host} (${roots.join(', ')})`,
    true
  )
}

/** `fs/read_text_file` on the host: a resolved path (confineRemote), optional start line and line limit. */
export async function readRemoteTextFile(endpoint: SshEndpoint, file: string, line?: number | null, limit?: number | null): Promise<string> {
  const f = shQuote(file)
  const script = [
    `f=${f}`,
    `[ -L "$f" ] && exit ${EXIT.notRegular}`,
    `[ -d "$f" ] && exit ${EXIT.folder}`,
    `[ -e "$f" ] || exit ${EXIT.missing}`,
    `[ -f "$f" ] || exit ${EXIT.notRegular}`,
    `[ -r "$f" ] || exit ${EXIT.denied}`,
    REFUSE_HARD_LINK,
    `s=$(wc -c < "$f") || exit ${EXIT.denied}`,
    `[ "$s" -le ${MAX_READ_BYTES} ] || { echo "$s" >&2; exit ${EXIT.tooLarge}; }`,
    `exec cat -- "$f"`
  ].join('; ')
  const result = await endpoint.run('read', script, '', { maxBytes: MAX_READ_BYTES })
  if (result.code !== 0) throw fileFailure(result.code, result.stderr, file, endpoint)
  return linesOf(result.stdout.toString('utf8'), line, limit)
}

/**
 * `fs/write_text_file` on the host: a resolved path; missing folders are made;
 * an existing file must be a regular file with one name (its mode is kept). The
 * text goes to a new file in the same folder, moved over the old name: never
 * written through a link.
 */
export async function writeRemoteTextFile(endpoint: SshEndpoint, file: string, content: string): Promise<void> {
  const script = [
    `f=${shQuote(file)}`,
    `[ -L "$f" ] && exit ${EXIT.notRegular}`,
    `[ -d "$f" ] && exit ${EXIT.folder}`,
    `{ [ -e "$f" ] && [ ! -f "$f" ]; } && exit ${EXIT.notRegular}`,
    REFUSE_HARD_LINK,
    `d=\${f%/*}`,
    `mkdir -p -- "\${d:-/}" 2>/dev/null || exit ${EXIT.noFolder}`,
    `{ [ -e "$f" ] && [ ! -w "$f" ]; } && exit ${EXIT.denied}`,
    `t=$(mktemp "\${d:-}/.switchboard-XXXXXXXX") || exit ${EXIT.noFolder}`,
    `trap 'rm -f -- "$t"' EXIT`,
    `cat > "$t" || exit ${EXIT.denied}`,
    // The old file's permission bits, read from ls (stat's options differ between GNU and BSD); a new file's from the umask.
    `if [ -f "$f" ]; then m=$(ls -ld -- "$f" | awk '{m=0; for(i=2;i<=10;i++){m=m*2+(substr($1,i,1)~/[rwxst]/)} printf "%o", m}'); else m=$(printf '%o' $((0666 & ~$(umask)))); fi`,
    `chmod "$m" "$t" 2>/dev/null`,
    // A link or folder put there since the checks is not followed.
    `{ [ -L "$f" ] || [ -d "$f" ]; } && exit ${EXIT.notRegular}`,
    `mv -f -- "$t" "$f" || exit ${EXIT.denied}`,
    `trap - EXIT`
  ].join('; ')
  const result = await endpoint.run('write', script, Buffer.from(content, 'utf8'))
  if (result.code !== 0) throw fileFailure(result.code, result.stderr, file, endpoint)
}

/**
 * Refuses a prompt whose file links (@-mentions: `resource_link`s to `file:`
 * URIs, which name paths on the host for a project there) name a regular file
 * with more than one name on the host, as refuseLinkedMentions does here: a
 * hard link in the project may be a file outside it, which the agent would
 * then read on the user's word. Throws a sentence naming the file.
 */
export async function refuseRemoteLinkedMentions(endpoint: SshEndpoint, attachments: { type: string; uri?: string }[]): Promise<void> {
  for (const attachment of attachments) {
    if (attachment.type !== 'resource_link' || !attachment.uri || !/^file:/i.test(attachment.uri)) continue
    let file: string
    try {
      file = decodeURIComponent(new URL(attachment.uri).pathname)
    } catch {
      continue // not a path: nothing on the host to look at
    }
    const result = await endpoint.run('mention', [`f=${shQuote(file)}`, REFUSE_HARD_LINK].join('; '))
    if (result.code === EXIT.hardLink) {
      const links = Number(result.stderr.trim()) || 2
      const refusal = hardLinkRefusal(file, links)
        .message.replace(/^Refused: /, 'Not sent: ')
        .replace(/; Switchboard/, ` on ${endpoint.host}; Switchboard`)
      throw new Error(`${refusal}; mention another file or remove the link`)
    }
  }
}

/**
 * A project folder on the host, for @-mentions: its files without following
 * links, the same folders skipped as here, at most MAX_FILES (then `truncated`).
 */
export async function listRemoteFiles(endpoint: SshEndpoint, root: string): Promise<FileListing> {
  const skipped = [...SKIPPED].map((name) => `-name ${shQuote(name)}`).join(' -o ')
  const script = `cd -- ${shQuote(root)} || exit ${EXIT.missing}; exec find . -type d \\( ${skipped} \\) -prune -o -type f -exec printf '%s\\0' {} +`
  // A path is at most 4096 bytes: this is the cap with room for every name.
  const result = await endpoint.run('files', script, '', { maxBytes: MAX_FILES * 512, timeoutMs: 60_000 })
  if (result.code === EXIT.missing) throw new Error(`The project folder ${root} does not exist on ${endpoint.host} any more`)
  const names = result.stdout.toString('utf8').split('\0')
  // The last name may be cut short (or empty after the last NUL).
  names.pop()
  const files: ProjectFile[] = names
    .slice(0, MAX_FILES)
    .map((name) => name.replace(/^\.\//, ''))
    .sort((a, b) => a.localeCompare(b))
    .map((relative) => ({ path: path.posix.join(root, relative), relative }))
  return { files, truncated: result.cut || names.length > MAX_FILES }
}

/** A folder on the host, checked there: absolute, existing, a folder; returned resolved (lexically). */
export async function checkRemoteFolder(endpoint: SshEndpoint, typed: string, what = 'Folder'): Promise<string> {
  const trimmed = typed.trim()
  if (!path.posix.isAbsolute(trimmed))
    throw new Error(`${what} on ${endpoint.host} must be an absolute path, like /home/you/code/app (got '${trimmed}')`)
  const folder = path.posix.resolve(trimmed)
  const q = shQuote(folder)
  const result = await endpoint.run('check', `if [ -d ${q} ]; then echo folder; elif [ -e ${q} ]; then echo file; else echo none; fi`)
  const found = result.stdout.toString('utf8').trim()
  if (found === 'none') throw new Error(`${what} not found on ${endpoint.host}: ${folder}`)
  if (found === 'file') throw new Error(`Not a folder on ${endpoint.host}: ${folder}`)
  if (found !== 'folder') throw new Error(`Could not check ${folder} on ${endpoint.host}: ${result.stderr.trim() || `exit code ${result.code}`}`)
  return folder
}

/** A new empty folder on the host (for a capability check's session), removed with `removeRemoteScratch`. */
export async function remoteScratch(endpoint: SshEndpoint): Promise<string> {
  const result = await endpoint.run('scratch', `exec mktemp -d "\${TMPDIR:-/tmp}/switchboard-check-XXXXXX"`)
  const folder = result.stdout.toString('utf8').trim()
  if (result.code !== 0 || !folder.startsWith('/')) throw new Error(`Could not make a scratch folder on ${endpoint.host}: ${result.stderr.trim()}`)
  return folder
}

/** Throws a sentence saying how to remove it by hand when it could not be removed (ssh failed, or rm did). */
export async function removeRemoteScratch(endpoint: SshEndpoint, folder: string): Promise<void> {
  // Only what remoteScratch made.
  if (!/\/switchboard-check-[A-Za-z0-9]+$/.test(folder)) return
  const command = `rm -rf -- ${shQuote(folder)}`
  const result = await endpoint.run('scratch', `exec ${command}`).catch((error: Error) => ({ code: null, stderr: error.message }))
  if (result.code === 0) return
  const why = result.stderr.trim() || `exit code ${result.code}`
  throw new Error(`The scratch folder ${folder} could not be removed from ${endpoint.host} (${why}): remove it there with ${command}`)
}

/** A script's failure as the local file functions fail: an errno code and a sentence, or a refusal. */
function fileFailure(code: number | null, stderr: string, file: string, endpoint: SshEndpoint): Error {
  const on = `on ${endpoint.host}`
  switch (code) {
    case EXIT.missing:
      return Object.assign(new Error(`${file} does not exist ${on}`), { code: 'ENOENT' })
    case EXIT.folder:
      return Object.assign(new Error(`${file} is a folder ${on}`), { code: 'EISDIR' })
    case EXIT.notRegular:
      return new PathRefusedError(`Refused: '${file}' is not a regular file ${on} (a link, device, pipe or socket)`)
    case EXIT.tooLarge:
      return new PathRefusedError(
        `Refused: '${file}' is ${Math.round(Number(stderr.trim()) / 1048576)} MB; files of at most ${MAX_READ_BYTES / 1048576} MB are read`
      )
    case EXIT.hardLink:
      return new PathRefusedError(hardLinkRefusal(file, Number(stderr.trim()) || 2).message.replace(/; Switchboard/, ` ${on}; Switchboard`))
    case EXIT.denied:
      return Object.assign(new Error(`Permission denied: ${file} ${on}`), { code: 'EACCES' })
    case EXIT.noFolder:
      return Object.assign(new Error(`The folder of ${file} cannot be made ${on}`), { code: 'EACCES' })
  }
  if (/Permission denied/i.test(stderr)) return Object.assign(new Error(`Permission denied: ${file} ${on}`), { code: 'EACCES' })
  return new Error(`${file} ${on}: ${stderr.trim() || `exit code ${code}`}`)
}
