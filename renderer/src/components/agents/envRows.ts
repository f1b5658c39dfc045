import type { AgentCommand, NetworkTransport } from '../../../../shared/transport'

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

/** The rows of an agent's command's variables (plain, then secret). */
export function rowsOf(agent: AgentCommand | null): EnvRow[] {
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

/** A network agent's header rows: every header is secret (a token), shown as "•••• set" once stored. */
export function headerRowsOf(transport: NetworkTransport | null): EnvRow[] {
  return (transport?.secretHeaders ?? []).map((name) => ({ key: nextKey++, name, value: '', secret: true, storedAs: name }))
}

/** The header rows as the request wants them (null: keep the stored value); throws a sentence for the form. */
export function headersFromRows(rows: EnvRow[]): Record<string, string | null> {
  const headers: Record<string, string | null> = {}
  for (const row of rows) {
    const name = row.name.trim()
    if (!name) {
      if (row.value) throw new Error('A header has a value but no name')
      continue
    }
    if (Object.keys(headers).some((h) => h.toLowerCase() === name.toLowerCase())) throw new Error(`The header ${name} is listed twice`)
    if (keepsStoredValue(row)) headers[name] = null
    else if (row.value.trim()) headers[name] = row.value
    else throw new Error(`The header ${name} has no value: type it`)
  }
  return headers
}
