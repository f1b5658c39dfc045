/**
 * What runs on the remote host. The command line ssh sends is always the same
 * short text, `exec sh -c 'IFS= read -r l && eval "$l"' switchboard-<what>`:
 * the script itself (the folder, the variables and secrets, the command) is
 * the first line written to its stdin, so nothing of it is on a command line
 * `ps` shows there, nor on the remote disk. One line, in POSIX sh, so any
 * login shell (bash, zsh, dash, fish) passes the command line on unchanged.
 */

/** The command line ssh runs on the host; `what` names it in the host's `ps` (switchboard-agent, switchboard-read, …). */
export function remoteCommand(what: string): string {
  return `exec sh -c 'IFS= read -r l && eval "$l"' switchboard-${what}`
}

/** A word for sh, in single quotes; a line break goes in as "$nl" so the script stays one line. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`).replace(/\n/g, `'"$nl"'`)}'`
}

/** Defines $nl (a line break) for the quoted words that need it. */
const NEWLINE = `nl=$(printf '\\n_'); nl=\${nl%_}; `

/** A name sh can export (an agent's `terminal/create` names its own variables: nothing else may be spliced in). */
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The stderr line a lifeline script writes when it cannot enter its folder (it then exits 126). */
export const NO_FOLDER_LINE = 'switchboard-ssh: cannot enter the folder'

export interface LifelineSpec {
  /** The folder to start in (absent: the login's home folder). */
  cwd?: string
  /** Variables exported for the command, over the login's own environment. */
  env: Record<string, string>
  /** The command and its arguments, or a shell command line (`sh -c`). */
  command: { argv: string[] } | { shell: string }
  /** Put in the command's environment: what it leaves behind is found by it (Linux hosts, /proc). */
  mark: string
  /** The command's stdin: the stream after the script (an agent's ACP messages), or nothing (a terminal's command). */
  stdin: 'stream' | 'none'
  /** Marks of earlier commands whose connection was lost: what still runs with them is ended first (Linux hosts). */
  leftovers?: string[]
}

/**
 * A command that ends with the connection. Without a terminal, sshd sends the
 * remote command no SIGHUP when the connection drops or the client goes: it
 * only closes its stdin. So the command does not read ssh's stdin itself: a
 * `cat` passes it on, and when it ends (EOF: the client closed it, or sshd
 * closed the session), the whole process group gets SIGTERM, then SIGKILL
 * two seconds later; on a Linux host also every process carrying the mark
 * (one that left the group with setsid). When the command ends first, the
 * same happens to what it left running, and the script exits with its code.
 * sshd closes the stdin of a session whose connection it finds dead only by
 * its own keep-alive (ClientAliveInterval, sent only while the session is
 * quiet): `leftovers` lets the next command on the host end what a lost
 * connection left running, without waiting for that.
 */
export function lifelineScript(spec: LifelineSpec): string {
  for (const name of Object.keys(spec.env)) if (!SHELL_NAME.test(name)) throw new Error(`'${name}' is not a variable name sh can set`)
  const words = [...Object.values(spec.env), ...('argv' in spec.command ? spec.command.argv : [spec.command.shell]), spec.cwd ?? '']
  const safe = (mark: string): string => mark.replace(/[^A-Za-z0-9._-]/g, '')
  const mark = safe(spec.mark)
  const command = 'argv' in spec.command ? spec.command.argv : ['sh', '-c', spec.command.shell]
  return [
    words.some((w) => w.includes('\n')) ? NEWLINE : '',
    spec.cwd ? `cd -- ${shQuote(spec.cwd)} 2>/dev/null || { echo '${NO_FOLDER_LINE}' >&2; exit 126; }; ` : '',
    ...Object.entries(spec.env).map(([name, value]) => `export ${name}=${shQuote(value)}; `),
    `set -- ${command.map(shQuote).join(' ')}; `,
    `sweep() { [ -d /proc/self ] || return 0; for e in $(grep -las "SWITCHBOARD_PROCESS_MARK=$1" /proc/[0-9]*/environ); do p=\${e#/proc/}; kill -s KILL "\${p%/environ}" 2>/dev/null; done; }; `,
    ...(spec.leftovers ?? []).map((left) => `sweep '${safe(left)}'; `),
    `fin() { trap '' TERM; kill -s TERM 0; sweep '${mark}'; (sleep 2; kill -s KILL 0) </dev/null >/dev/null 2>&1 & }; `,
    `trap '' TERM; exec 3<&0 0</dev/null; `,
    `{ trap - TERM; cat <&3; fin; } | { trap - TERM; exec 3<&-; SWITCHBOARD_PROCESS_MARK='${mark}' "$@"${spec.stdin === 'none' ? ' </dev/null' : ''}; s=$?; fin; exit $s; } & `,
    `exec 3<&-; wait $!; exit $?`
  ].join('')
}
