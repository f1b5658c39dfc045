import type { AgentDefinition } from '../../../../shared/domain'

/**
 * The variable rows of the agent form. A secret whose value is stored shows as
 * "•••• set": left empty it is kept (null to the Host), typed over it is replaced.
 */

export interface EnvRow {
  key: number
  name: string
  value: string
  secret: boolean
  /** The name under which a value is already stored (a secret of the agent being edited). */
  storedAs?: string
}

let nextKey = 1

export function newRow(secret = false): EnvRow {
  return { key: nextKey++, name: '', value: '', secret }
}

export function rowsOf(agent: AgentDefinition | null): EnvRow[] {
  if (!agent) return []
  return [
    ...Object.entries(agent.env).map(([name, value]) => ({ key: nextKey++, name, value, secret: false })),
    ...(agent.secretEnv ?? []).map((name) => ({ key: nextKey++, name, value: '', secret: true, storedAs: name }))
  ]
}

/** A stored secret still under its name, with nothing typed over it. */
export function keepsStoredValue(row: EnvRow): boolean {
  return row.secret && row.storedAs !== undefined && row.storedAs === row.name.trim() && row.value === ''
}

/** The rows as the request wants them; throws a sentence for the form when a row is not complete. */
export function envFromRows(rows: EnvRow[]): { env: Record<string, string>; secretEnv: Record<string, string | null> } {
  const env: Record<string, string> = {}
  const secretEnv: Record<string, string | null> = {}
  for (const row of rows) {
    const name = row.name.trim()
    if (!name) {
      if (row.value) throw new Error('A variable has a value but no name')
      continue
    }
    if (name in env || name in secretEnv) throw new Error(`${name} is listed twice`)
    if (!row.secret) env[name] = row.value
    else if (keepsStoredValue(row)) secretEnv[name] = null
    else if (row.value) secretEnv[name] = row.value
    else throw new Error(`${name} is marked secret: type its value`)
  }
  return { env, secretEnv }
}

/** Arguments typed one per line; blank lines are left out. */
export function argsFromText(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line.trim() !== '')
}
