import { randomUUID } from 'node:crypto'
import type { CreateElicitationRequest, CreateElicitationResponse, ElicitationSchema } from '@agentclientprotocol/sdk'
import type { ElicitationField, ElicitationValue, PendingElicitation } from '../../../shared/domain'

/**
 * `elicitation/create`: an agent asks the user for structured input, either a
 * form built from a restricted JSON Schema or a URL to open. This module turns
 * the request into fields a view can render, checks the user's answer against
 * them before it goes back to the agent, and keeps what is pending.
 */

export class ElicitationError extends Error {}

const FORMATS = new Set(['email', 'uri', 'date', 'date-time'])

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}
function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

/** The form's fields, in the order the agent listed them; a property of a kind we do not know is refused. */
export function formFields(schema: ElicitationSchema | null | undefined): ElicitationField[] {
  const required = new Set(schema?.required ?? [])
  return Object.entries(schema?.properties ?? {}).map(([name, raw]) => {
    const property = raw as Record<string, unknown>
    const base = {
      name,
      title: text(property.title) ?? name,
      description: text(property.description),
      required: required.has(name)
    }
    switch (property.type) {
      case 'string': {
        const oneOf = Array.isArray(property.oneOf) ? (property.oneOf as { const: string; title?: string }[]) : null
        const enumValues = Array.isArray(property.enum) ? (property.enum as string[]) : null
        if (oneOf || enumValues) {
          const options = oneOf
            ? oneOf.map((o) => ({ value: String(o.const), label: text(o.title) ?? String(o.const) }))
            : (enumValues ?? []).map((v) => ({ value: String(v), label: String(v) }))
          return { ...base, type: 'select', options, default: text(property.default) }
        }
        return {
          ...base,
          type: 'string',
          default: typeof property.default === 'string' ? property.default : undefined,
          format: FORMATS.has(String(property.format)) ? (property.format as ElicitationField['format']) : undefined,
          minLength: num(property.minLength),
          maxLength: num(property.maxLength),
          pattern: text(property.pattern)
        }
      }
      case 'number':
      case 'integer':
        return { ...base, type: property.type, default: num(property.default), minimum: num(property.minimum), maximum: num(property.maximum) }
      case 'boolean':
        return { ...base, type: 'boolean', default: typeof property.default === 'boolean' ? property.default : undefined }
      case 'array': {
        const items = (property.items ?? {}) as { enum?: unknown; anyOf?: unknown }
        const options = Array.isArray(items.anyOf)
          ? (items.anyOf as { const: string; title?: string }[]).map((o) => ({ value: String(o.const), label: text(o.title) ?? String(o.const) }))
          : Array.isArray(items.enum)
            ? (items.enum as string[]).map((v) => ({ value: String(v), label: String(v) }))
            : null
        if (!options) throw new ElicitationError(`The form's field '${name}' is a list of a kind Switchboard cannot show`)
        return {
          ...base,
          type: 'multiselect',
          options,
          default: Array.isArray(property.default) ? (property.default as string[]) : undefined,
          minItems: num(property.minItems),
          maxItems: num(property.maxItems)
        }
      }
      default:
        throw new ElicitationError(`The form's field '${name}' has a type Switchboard cannot show (${String(property.type)})`)
    }
  }) as ElicitationField[]
}

function isDate(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value))
}

/** The user's answer checked against the fields: the cleaned content, or an error naming the first problem. */
export function checkAnswer(fields: ElicitationField[], content: Record<string, unknown>): Record<string, ElicitationValue> {
  const known = new Set(fields.map((f) => f.name))
  const unknown = Object.keys(content).find((k) => !known.has(k))
  if (unknown) throw new ElicitationError(`The form has no field '${unknown}'`)
  const out: Record<string, ElicitationValue> = {}
  for (const field of fields) {
    const value = content[field.name]
    const empty = value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
    if (empty) {
      if (field.required) throw new ElicitationError(`${field.title} is required`)
      continue
    }
    const fail = (why: string): never => {
      throw new ElicitationError(`${field.title} ${why}`)
    }
    switch (field.type) {
      case 'string': {
        if (typeof value !== 'string') fail('must be text')
        const s = value as string
        if (field.minLength !== undefined && s.length < field.minLength) fail(`needs at least ${field.minLength} characters`)
        if (field.maxLength !== undefined && s.length > field.maxLength) fail(`takes at most ${field.maxLength} characters`)
        if (field.pattern) {
          let re: RegExp | null = null
          try {
            re = new RegExp(field.pattern, 'u')
          } catch {
            re = null // a pattern JavaScript cannot read is the agent's to check
          }
          if (re && !re.test(s)) fail(`does not have the expected form (${field.pattern})`)
        }
        if (field.format === 'email' && !/^[^\s@]+@[^\s@]+$/.test(s)) fail('must be an email address')
        if (field.format === 'uri' && !URL.canParse(s)) fail('must be a URL')
        if (field.format === 'date' && !isDate(s)) fail('must be a date (YYYY-MM-DD)')
        if (field.format === 'date-time' && Number.isNaN(Date.parse(s))) fail('must be a date and time')
        out[field.name] = s
        break
      }
      case 'number':
      case 'integer': {
        const n = typeof value === 'string' ? Number(value) : value
        if (typeof n !== 'number' || !Number.isFinite(n)) fail('must be a number')
        if (field.type === 'integer' && !Number.isInteger(n)) fail('must be a whole number')
        if (field.minimum !== undefined && (n as number) < field.minimum) fail(`must be at least ${field.minimum}`)
        if (field.maximum !== undefined && (n as number) > field.maximum) fail(`must be at most ${field.maximum}`)
        out[field.name] = n as number
        break
      }
      case 'boolean':
        if (typeof value !== 'boolean') fail('must be yes or no')
        out[field.name] = value as boolean
        break
      case 'select':
        if (typeof value !== 'string' || !(field.options ?? []).some((o) => o.value === value)) fail('must be one of the choices')
        out[field.name] = value as string
        break
      case 'multiselect': {
        if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || !(field.options ?? []).some((o) => o.value === v))) {
          fail('must be among the choices')
        }
        const list = [...new Set(value as string[])]
        if (field.minItems !== undefined && list.length < field.minItems) fail(`needs at least ${field.minItems} choices`)
        if (field.maxItems !== undefined && list.length > field.maxItems) fail(`takes at most ${field.maxItems} choices`)
        out[field.name] = list
        break
      }
    }
  }
  return out
}

export type ElicitationAction = 'accept' | 'decline' | 'cancel'

interface Pending {
  view: PendingElicitation
  settle: (response: CreateElicitationResponse) => void
  elicitationId?: string
}

/** Elicitations waiting for the user, across agents and sessions. */
export class Elicitations {
  private readonly pending = new Map<string, Pending>()

  constructor(
    private readonly onChange: (pending: PendingElicitation[]) => void,
    private readonly onAnswered: (view: PendingElicitation, action: ElicitationAction, content?: Record<string, ElicitationValue>) => void
  ) {}

  list(): PendingElicitation[] {
    return [...this.pending.values()].map((p) => p.view)
  }

  /**
   * Holds the agent's request until the user answers (or the request is
   * cancelled). A mode or field we cannot show is refused at once with an
   * error the agent can read.
   */
  ask(agentId: string, sessionId: string | null, request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    const requestId = randomUUID()
    const r = request as CreateElicitationRequest & { requestedSchema?: ElicitationSchema; url?: string; elicitationId?: string }
    let view: PendingElicitation
    if (r.mode === 'form') {
      view = {
        requestId,
        agentId,
        sessionId,
        message: r.message,
        mode: 'form',
        title: text(r.requestedSchema?.title),
        fields: formFields(r.requestedSchema)
      }
    } else if (r.mode === 'url') {
      if (!URL.canParse(r.url ?? '')) throw new ElicitationError(`'${String(r.url)}' is not a URL that can be opened`)
      if (!/^https?:$/.test(new URL(r.url ?? '').protocol)) throw new ElicitationError('Only http(s) URLs can be opened')
      view = { requestId, agentId, sessionId, message: r.message, mode: 'url', fields: [], url: r.url }
    } else {
      throw new ElicitationError(`Switchboard cannot show elicitations of mode '${String(r.mode)}'`)
    }
    return new Promise<CreateElicitationResponse>((resolve) => {
      const entry: Pending = {
        view,
        elicitationId: r.mode === 'url' ? r.elicitationId : undefined,
        settle: (response) => {
          if (!this.pending.delete(requestId)) return
          resolve(response)
          this.onChange(this.list())
        }
      }
      this.pending.set(requestId, entry)
      // Cancelled by the agent (or its connection closing), unless it was answered or cancelled here already.
      signal.addEventListener('abort', () => this.pending.has(requestId) && this.answer(requestId, 'cancel'), { once: true })
      this.onChange(this.list())
    })
  }

  /** The user's answer; `accept` on a form is checked against its fields first. */
  answer(requestId: string, action: ElicitationAction, content: Record<string, unknown> = {}): void {
    const entry = this.pending.get(requestId)
    if (!entry) throw new ElicitationError('That question is no longer waiting for an answer')
    if (action === 'accept' && entry.view.mode === 'form') {
      const checked = checkAnswer(entry.view.fields, content)
      this.onAnswered(entry.view, action, checked)
      entry.settle({ action: 'accept', content: checked })
      return
    }
    if (action === 'accept' && entry.view.mode === 'url') {
      // The user agreed to open the page: the agent learns it now and says when the flow there is complete.
      this.onAnswered(entry.view, action)
      entry.settle({ action: 'accept' })
      return
    }
    this.onAnswered(entry.view, action)
    entry.settle({ action })
  }

  /** Everything pending for a session (cancelled turn, closed session) or an agent (it exited). */
  cancelWhere(match: (view: PendingElicitation) => boolean): void {
    for (const entry of [...this.pending.values()]) if (match(entry.view)) this.answer(entry.view.requestId, 'cancel')
  }
}
