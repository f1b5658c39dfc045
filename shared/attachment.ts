import { z } from 'zod'

/** Content sent with a prompt besides its text; each kind only to agents whose prompt capabilities allow it. */
export const attachmentSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('resource_link'),
    uri: z.string().min(1).max(4096),
    name: z.string().min(1).max(500),
    mimeType: z.string().max(200).optional()
  }),
  z.object({ type: z.literal('image'), data: z.string().min(1).max(30_000_000), mimeType: z.string().regex(/^image\/[\w.+-]+$/) }),
  z.object({ type: z.literal('audio'), data: z.string().min(1).max(30_000_000), mimeType: z.string().regex(/^audio\/[\w.+-]+$/) }),
  z.object({
    type: z.literal('resource'),
    uri: z.string().min(1).max(4096),
    text: z.string().max(5_000_000),
    mimeType: z.string().max(200).optional()
  })
])
export type Attachment = z.infer<typeof attachmentSchema>
