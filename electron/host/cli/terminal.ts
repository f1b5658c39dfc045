import { createInterface } from 'node:readline/promises'
import type { PendingPermission, PermissionOptionView } from '../../../shared/domain'

/**
 * Questions on the terminal the command was started from (stdin and stderr,
 * so stdout keeps only the reply): a permission for `--allow ask`, the code
 * `serve` printed to confirm a project it does not know yet.
 */
export function canAsk(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true
}

export async function question(text: string): Promise<string> {
  const reader = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
  try {
    return (await reader.question(text)).trim()
  } finally {
    reader.close()
  }
}

/** Lists the agent's options, numbered; Enter or anything not listed denies it once (null). */
export async function askPermission(permission: PendingPermission): Promise<PermissionOptionView | null> {
  const lines = permission.options.map((option, index) => `  ${index + 1}. ${option.name}`)
  const answer = await question(
    `\nThe agent asks: ${permission.title}\n${lines.join('\n')}\nChoose 1-${permission.options.length} (Enter denies it): `
  )
  const picked = permission.options[Number(answer) - 1]
  if (picked) return picked
  return permission.options.find((option) => option.kind === 'reject_once') ?? null
}
