import type { ContentBlock, SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk'
import type { Attachment } from '../../../shared/contract'
import type { SessionRecord } from '../../../shared/domain'
import type { SessionModelState, SessionStateRecord, TranscriptHeader } from '../../../shared/transcript'
import type { AgentServers } from '../mcp/acp-servers'
import type { AgentConnection } from '../connection/connection'
import type { WithSystemPrompt } from '../connection/protocol'

/** What a session's records and transcript lines are made of: pure functions, no state. */

export function headerOf(record: SessionRecord): TranscriptHeader {
  return {
    t: 'header',
    v: 2,
    id: record.id,
    acpSessionId: record.acpSessionId ?? '',
    agentId: record.agentId,
    projectId: record.projectId,
    cwd: record.cwd,
    createdAt: record.createdAt
  }
}

/** A title from the first line of a prompt. */
export function titleFrom(text: string): string {
  const firstLine = text.trim().split('\n')[0] ?? ''
  return firstLine.length > 80 ? firstLine.slice(0, 77) + '…' : firstLine || 'Untitled session'
}

/** What a session record keeps of the MCP servers it started with. */
export function sessionMcp(servers: AgentServers): Pick<SessionRecord, 'mcpServers' | 'mcpLeftOut'> {
  return { mcpServers: servers.given, mcpLeftOut: servers.leftOut }
}

/** The modes, configuration options and models a session/new, load, resume or fork answer carried, as a record (null: none). */
export function sessionStateFrom(response: unknown): SessionStateRecord | null {
  const r = (typeof response === 'object' && response !== null ? response : {}) as Record<string, unknown>
  const state: SessionStateRecord = { t: 'session', at: new Date().toISOString() }
  if (isModeState(r.modes)) state.modes = r.modes
  if (Array.isArray(r.configOptions)) state.configOptions = r.configOptions as SessionConfigOption[]
  if (isModelState(r.models)) state.models = r.models
  return state.modes || state.configOptions || state.models ? state : null
}

/** A prompt attachment as an ACP content block, refused when the agent's prompt capabilities exclude it. */
export function toContentBlock(attachment: Attachment, connection: AgentConnection): ContentBlock {
  const accepts = connection.capabilities.prompt
  const refuse = (what: string, capability: string): never => {
    throw new Error(`${connection.definition.name} does not accept ${what} in prompts (it does not announce promptCapabilities.${capability})`)
  }
  switch (attachment.type) {
    case 'resource_link':
      return { type: 'resource_link', uri: attachment.uri, name: attachment.name, mimeType: attachment.mimeType }
    case 'image':
      if (!accepts.image) refuse('images', 'image')
      return { type: 'image', data: attachment.data, mimeType: attachment.mimeType }
    case 'audio':
      if (!accepts.audio) refuse('audio', 'audio')
      return { type: 'audio', data: attachment.data, mimeType: attachment.mimeType }
    case 'resource':
      if (!accepts.embeddedContext) refuse('embedded files', 'embeddedContext')
      return { type: 'resource', resource: { uri: attachment.uri, text: attachment.text, mimeType: attachment.mimeType } }
  }
}

/**
 * `additionalDirectories` for a session request: only to an agent that announces
 * them (older agents may reject the unknown field), and only when there are some.
 */
/**
 * The system prompt for session/new, load, resume or fork: sent (mode `append`, the one every agent that
 * announces `sessionCapabilities.systemPrompt` takes) only to such an agent, and never empty.
 */
export function systemPromptFor(connection: AgentConnection, text: string | undefined): WithSystemPrompt {
  return text && connection.capabilities.session.systemPrompt ? { systemPrompt: { mode: 'append', content: [{ type: 'text', text }] } } : {}
}

/** Why a system prompt was not sent to this agent. */
export function systemPromptLeftOut(agentName: string): string {
  return `${agentName} does not take a system prompt from Switchboard (it does not announce sessionCapabilities.systemPrompt), so none was sent`
}

export function directoriesFor(connection: AgentConnection, directories: string[]): { additionalDirectories?: string[] } {
  return connection.capabilities.session.additionalDirectories && directories.length > 0 ? { additionalDirectories: directories } : {}
}

function isModeState(value: unknown): value is SessionModeState {
  const v = value as SessionModeState | null
  return typeof v === 'object' && v !== null && typeof v.currentModeId === 'string' && Array.isArray(v.availableModes)
}

function isModelState(value: unknown): value is SessionModelState {
  const v = value as SessionModelState | null
  return typeof v === 'object' && v !== null && typeof v.currentModelId === 'string' && Array.isArray(v.availableModels)
}
