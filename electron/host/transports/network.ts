import { readFile } from 'node:fs/promises'
import { isAbsolute } from 'node:path'
import { isIP } from 'node:net'
import type { TransportInput } from '../../../shared/agent-requests'
import { secretNamesOf, type NetworkTransport } from '../../../shared/transport'
import { programToRun } from '../contract/confirmations'
import { sameSet } from './command-input'
import type { CheckedTransport, TransportKindModule } from './kind'
import { NetworkLink } from './network-link'

/**
 * An agent over the network, at a URL (network-link.ts `NetworkLink`): it
 * runs no command here, its headers are secrets, its TLS is always verified.
 * It works on the project through the client, here; a terminal sign-in, which
 * would run its command here, has none to run.
 */
export const networkKind: TransportKindModule<NetworkTransport> = {
  check: (input, previous) => checkNetworkAgent(input, previous ? secretNamesOf(previous).headers : []),

  program(name, transport, checked) {
    // Nothing runs here, but the agent will: it reads and writes files and runs commands through Switchboard.
    const secretHeaders = transport.secretHeaders ?? []
    const headers = Object.fromEntries(secretHeaders.map((h) => [h, h in checked.headerValues ? 'new' : 'kept'] as const))
    return programToRun(
      `Agent “${name}” over the network (it can read and write files in its sessions' folders and run commands here)${sentInClear(transport.url, secretHeaders)}`,
      { command: transport.url, args: [], env: transport.caFile ? { 'CA file': transport.caFile } : {} },
      headers
    )
  },

  changesWhatRuns: (next, was, checked) =>
    next.url !== was.url ||
    (next.caFile ?? '') !== (was.caFile ?? '') ||
    !sameSet(next.secretHeaders ?? [], was.secretHeaders ?? []) ||
    Object.keys(checked.headerValues).length > 0,

  terminalSignIn(name, _transport, method) {
    throw new Error(
      `${method.name} runs ${name}'s command in a terminal, but ${name} runs over the network: sign in where its server runs, or give its token as a header`
    )
  },

  // It has no command to find: whether it can be reached shows when it connects.
  installed: async () => ({}),

  plan: (definition, transport, host) => ({ open: (options) => new NetworkLink(definition, transport, { ...options, headers: host.headers }) })
}

type NetworkAgentInput = Extract<TransportInput, { kind: 'network' }>

/** A query parameter named as a credential is: `token`, `api_key`, `access_token`, `sig`, `password`… */
const SECRET_PARAM = /(token|key|secret|passw|pwd|auth|sig|credential|session|bearer|jwt)/i
/** A value that looks like one whatever its name: a long run of token characters with letters and digits. */
const CREDENTIAL_LIKE = /^(?=.*\d)(?=.*[A-Za-z])[\w\-.~+/=]{24,}$/

/** An HTTP header's name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * A network agent: a ws(s):// or http(s):// URL, headers kept as secrets, an optional CA file (absolute, holding a
 * PEM certificate). `stored`: the secret headers it had.
 */
async function checkNetworkAgent(input: NetworkAgentInput, stored: readonly string[]): Promise<CheckedTransport<NetworkTransport>> {
  const typed = input.url.trim()
  let url: URL
  try {
    url = new URL(typed)
  } catch {
    throw new Error(`The agent's address must be a URL like wss://agents.example.com/acp (got '${typed}')`)
  }
  if (!['ws:', 'wss:', 'http:', 'https:'].includes(url.protocol)) {
    throw new Error(`The agent's address must start with ws://, wss://, http:// or https:// (got ${url.protocol}//)`)
  }
  if (url.username || url.password) throw new Error("Put the agent's credentials in a header (Authorization), not in its address")
  // The address is kept in db.json and shown in logs, states and check reports: a secret in it would be too.
  for (const [name, value] of url.searchParams) {
    if (SECRET_PARAM.test(name) || CREDENTIAL_LIKE.test(value)) {
      throw new Error(
        `The agent's address carries what looks like a credential in its query ('${name}'): put it in a header (Authorization), which is kept in the secret store, not in the address`
      )
    }
  }
  url.hash = ''
  const kept = new Set(stored.map((h) => h.toLowerCase()))
  const headerValues: Record<string, string> = {}
  const secretHeaders: string[] = []
  for (const [key, value] of Object.entries(input.headers)) {
    const header = key.trim()
    if (!HEADER_NAME.test(header)) throw new Error(`'${key}' is not a valid HTTP header name`)
    if (secretHeaders.some((h) => h.toLowerCase() === header.toLowerCase())) throw new Error(`The header ${header} is given twice`)
    if (value === null) {
      if (!kept.has(header.toLowerCase())) throw new Error(`The header ${header} has no stored value yet: type one`)
    } else {
      if (!value.trim()) throw new Error(`The header ${header} has no value`)
      if (/[\r\n\0]/.test(value)) throw new Error(`The header ${header} has a line break in its value`)
      headerValues[header] = value.trim()
    }
    secretHeaders.push(header)
  }
  const caFile = input.caFile?.trim() ? await checkCaFile(input.caFile.trim()) : undefined
  return {
    transport: { kind: 'network', url: url.href, ...(secretHeaders.length ? { secretHeaders } : {}), ...(caFile ? { caFile } : {}) },
    secretValues: {},
    headerValues
  }
}

/** The CA file as typed: an absolute path to a readable file holding a PEM certificate. */
async function checkCaFile(typed: string): Promise<string> {
  if (!isAbsolute(typed)) throw new Error(`The CA file must be an absolute path (got '${typed}')`)
  let text: string
  try {
    text = await readFile(typed, 'utf8')
  } catch (error) {
    throw new Error(`The CA file ${typed} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`The CA file ${typed} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
  return typed
}

/**
 * What the confirmation must say when secret headers would travel unencrypted (ws:// or http://) to a host other
 * than this computer: confirming is then confirming that too. Empty otherwise.
 */
export function sentInClear(address: string, secretHeaders: readonly string[]): string {
  if (secretHeaders.length === 0) return ''
  const url = new URL(address)
  if (url.protocol !== 'ws:' && url.protocol !== 'http:') return ''
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const loopback = host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1'
  if (loopback) return ''
  return `. UNENCRYPTED: its secret headers (${secretHeaders.join(', ')}) are sent in the clear over ${url.protocol}// to ${url.host}, where anyone on the network between can read them; confirm only if that network is yours, else use ${url.protocol === 'ws:' ? 'wss' : 'https'}://`
}
