import * as z from 'zod/mini'
import { hostErrorCodes } from './errors'

/**
 * The envelope of every message the Host sends a window, as the window checks
 * it before anything else (renderer/src/host/transport.ts): a response's kind,
 * id, ok and error, an event's type and that it has a payload. Results and
 * payloads are `unknown` here: they are the Host's own output, typed by the
 * contract. Written with `zod/mini` (the same checks as zod's classic API,
 * in functions a bundler can leave out when unused), because this check is
 * in the window's first script: the classic API would add ~150 KB to it.
 * Re-exported by shared/contract.ts.
 */

const optionalString = z.optional(z.string())

export const agentProblemSchema = z.object({
  agentId: z.string(),
  kind: z.enum(['sign_in', 'not_installed', 'start_failed', 'session_failed']),
  summary: z.string(),
  detail: optionalString,
  hint: optionalString,
  lines: z.array(z.string()),
  found: z.boolean(),
  at: z.string()
})

/** What a change that would run a program asks the user to confirm (shared/confirmation.ts's CommandChange). */
export const commandChangeSchema = z.object({
  action: z.string(),
  confirm: z.string(),
  programs: z.array(
    z.object({
      label: z.string(),
      commandLine: z.string(),
      cwd: optionalString,
      env: z.array(z.object({ name: z.string(), value: z.string(), secret: z.optional(z.enum(['new', 'kept'])) })),
      download: optionalString
    })
  ),
  reach: z.optional(z.array(z.string())),
  note: optionalString
})

const hostEventSchema = z.object({ type: z.string(), payload: z.unknown() })

export const wireServerMessageSchema = z.union([
  z.object({
    kind: z.literal('response'),
    id: z.number(),
    ok: z.literal(true),
    result: z.unknown()
  }),
  z.object({
    kind: z.literal('response'),
    id: z.number(),
    ok: z.literal(false),
    error: z.object({
      message: z.string(),
      code: z.optional(z.enum(hostErrorCodes)),
      problem: z.optional(agentProblemSchema),
      confirmation: z.optional(commandChangeSchema)
    })
  }),
  z.object({ kind: z.literal('events'), events: z.array(hostEventSchema) })
])
