import { TextDecoder } from 'node:util'
import { parsePatch, type StructuredPatch } from 'diff'
import type * as v1 from '@agentclientprotocol/sdk'

/**
 * Version 2 values with a version 1 form, converted one by one (v2-adapter.ts
 * turns whole updates): tool call content (a diff from its patch text),
 * configuration options, commands, and what a session/new or session/resume
 * answer carries of them.
 */

export type Json = Record<string, unknown>

/** Version 2 tool call content as version 1 items; null when it has no version 1 form. */
export function toV1ToolContent(item: unknown): v1.ToolCallContent[] | null {
  if (!isObject(item)) return null
  switch (item.type) {
    case 'content':
      return isObject(item.content) && typeof item.content.type === 'string' ? [{ type: 'content', content: item.content as v1.ContentBlock }] : null
    case 'terminal':
      return typeof item.terminalId === 'string' ? [{ type: 'terminal', terminalId: item.terminalId }] : null
    case 'diff':
      return Array.isArray(item.changes)
        ? diffToV1(item.changes.filter(isObject), isObject(item.patch) && typeof item.patch.text === 'string' ? item.patch.text : null)
        : null
    default:
      return null
  }
}

/**
 * A version 2 diff (structured changes plus an optional git patch) as version
 * 1 diffs (path, old text, new text). The patch's hunks give the changed
 * parts of each file, joined by a `⋯` line where hunks are apart; a change
 * without patch text is named in words.
 */
function diffToV1(changes: Json[], patchText: string | null): v1.ToolCallContent[] {
  let files: StructuredPatch[] = []
  if (patchText) {
    try {
      files = parsePatch(patchText)
    } catch {
      files = []
    }
  }
  return changes.map((change): v1.ToolCallContent => {
    const path = String(change.path ?? '')
    const operation = String(change.operation ?? 'modify')
    const file =
      files.length === 1 && changes.length === 1 ? files[0] : files.find((f) => samePath(f.newFileName, path) || samePath(f.oldFileName, path))
    if (file && file.hunks.length > 0 && operation !== 'move' && operation !== 'copy') {
      const side = (keep: string): string =>
        file.hunks
          .map((h) =>
            h.lines
              .filter((l) => l[0] === ' ' || l[0] === keep)
              .map((l) => l.slice(1))
              .join('\n')
          )
          .join('\n⋯\n')
      return { type: 'diff', path, oldText: operation === 'add' ? null : side('-'), newText: operation === 'delete' ? '' : side('+') }
    }
    const from = typeof change.oldPath === 'string' ? change.oldPath : ''
    const words: Record<string, string> = {
      add: `Added ${path}`,
      delete: `Deleted ${path}`,
      modify: `Changed ${path}`,
      move: `Moved ${from} → ${path}`,
      copy: `Copied ${from} → ${path}`
    }
    return { type: 'content', content: { type: 'text', text: words[operation] ?? `${operation} ${path}` } }
  })
}

function samePath(fileName: string | undefined, path: string): boolean {
  if (!fileName || fileName === '/dev/null') return false
  const name = fileName.replace(/^[ab]\//, '')
  return name === path || path.endsWith(`/${name.replace(/^\/+/, '')}`)
}

/** Version 2 configuration options (`configId`) as version 1's (`id`); kinds without a version 1 form are left out. */
export function toV1ConfigOptions(options: unknown[]): v1.SessionConfigOption[] {
  return options.filter(isObject).flatMap((o): v1.SessionConfigOption[] => {
    if (typeof o.configId !== 'string' || typeof o.name !== 'string') return []
    const common = {
      id: o.configId,
      name: o.name,
      ...(typeof o.description === 'string' ? { description: o.description } : {}),
      ...(typeof o.category === 'string' ? { category: o.category } : {})
    }
    if (o.type === 'select' && typeof o.currentValue === 'string' && Array.isArray(o.options)) {
      return [{ ...common, type: 'select', currentValue: o.currentValue, options: o.options as v1.SessionConfigSelectOptions }]
    }
    if (o.type === 'boolean' && typeof o.currentValue === 'boolean') return [{ ...common, type: 'boolean', currentValue: o.currentValue }]
    return []
  })
}

/** Version 2 commands (`type: command`, typed input) as version 1's. */
export function toV1Commands(commands: unknown[]): v1.AvailableCommand[] {
  return commands.filter(isObject).flatMap((c): v1.AvailableCommand[] => {
    if (typeof c.name !== 'string') return []
    const input = isObject(c.input) && typeof c.input.hint === 'string' ? { input: { hint: c.input.hint } } : {}
    return [{ name: c.name, description: typeof c.description === 'string' ? c.description : '', ...input }]
  })
}

/** The configuration options and commands a version 2 session/new or session/resume answer carries. */
export function sessionAnswer(response: unknown): { configOptions?: v1.SessionConfigOption[]; commands?: v1.AvailableCommand[] } {
  const r = isObject(response) ? response : {}
  return {
    ...(Array.isArray(r.configOptions) ? { configOptions: toV1ConfigOptions(r.configOptions) } : {}),
    ...(Array.isArray(r.availableCommands) && r.availableCommands.length > 0 ? { commands: toV1Commands(r.availableCommands) } : {})
  }
}

export function decodeBase64(data: string): string {
  return new TextDecoder('utf-8').decode(Buffer.from(data, 'base64'))
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
