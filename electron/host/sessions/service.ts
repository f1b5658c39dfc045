import type { AskBroker } from '../asks/broker'
import type { HandlerSlice } from '../contract/handlers'
import type { McpRunWatch } from '../mcp/run-watch'
import type { Records } from '../storage/records'
import type { SessionConnector } from './connector'
import type { HandOff } from './hand-off'
import type { SessionLifecycle } from './lifecycle'
import type { PromptQueue } from './queue'
import type { SessionRegistry } from './registry'
import type { Turns } from './turns'

/** The `sessions.*` and `transcripts.*` requests. */

export interface SessionsServiceOptions {
  records: Records
  registry: SessionRegistry
  connector: SessionConnector
  lifecycle: SessionLifecycle
  turns: Turns
  queue: PromptQueue
  broker: AskBroker
  mcpRun: McpRunWatch
  handOff: HandOff
}

export function sessionsHandlers(rooms: SessionsServiceOptions): HandlerSlice<'sessions'> & HandlerSlice<'transcripts'> {
  const { records, registry, connector, lifecycle, turns, queue, broker, mcpRun, handOff } = rooms
  return {
    ...queue.handlers(),
    'sessions.list': async ({ projectId }) =>
      records.data.sessions.filter((s) => !projectId || s.projectId === projectId).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt)),
    'sessions.summary': async ({ limit, records: most }) =>
      records.listing.summary(
        limit,
        most,
        records.data.projects.map((p) => p.id)
      ),
    'sessions.page': async ({ projectId, agentId, before, limit }) => records.listing.page(projectId, agentId, before, limit),
    'sessions.get': async ({ ids }) => records.listing.get(ids),
    'sessions.states': async () => registry.allStates(),
    'sessions.new': ({ projectId, agentId, isolation, branch }) => lifecycle.create(projectId, agentId, { isolation, branch }),
    'sessions.open': ({ id, tail }) => lifecycle.open(id, tail),
    'sessions.continue': async ({ id }) => {
      await connector.ensureLive(id)
      return registry.stateOf(id)
    },
    'sessions.trustFolderForMcp': ({ id }, request) => mcpRun.trustFolder(id, request),
    'sessions.prompt': ({ id, text, attachments, rulesApply }) =>
      rulesApply ? turns.prompt(id, text, attachments) : broker.withoutRules(id, () => turns.prompt(id, text, attachments)),
    'sessions.cancel': async ({ id }) => {
      await turns.cancel(id)
      return {}
    },
    'sessions.respondPermission': async ({ id, requestId, optionId }) => {
      broker.answerPermission(id, requestId, optionId)
      return {}
    },
    'sessions.setMode': async ({ id, modeId, confirmSkip }) => {
      await turns.setMode(id, modeId, confirmSkip)
      return {}
    },
    'sessions.setConfigOption': async ({ id, configId, value, confirmSkip }) => {
      await turns.setConfigOption(id, configId, value, confirmSkip)
      return {}
    },
    'sessions.setModel': async ({ id, modelId }) => {
      await turns.setModel(id, modelId)
      return {}
    },
    'sessions.import': ({ projectId, agentId }) => lifecycle.importFromAgent(projectId, agentId),
    'sessions.close': async ({ id }) => {
      await lifecycle.close(id)
      return {}
    },
    'sessions.delete': ({ id, keepTranscript, removeWorktree, discardChanges }) =>
      lifecycle.delete(id, keepTranscript, removeWorktree, discardChanges),
    'sessions.fork': ({ id }) => lifecycle.fork(id),
    'sessions.continueInNew': ({ id }) => lifecycle.continueInNew(id),
    'sessions.handOff': (params) => handOff.handOff(params),
    'sessions.dropHandOffSeed': ({ id }) => handOff.dropSeed(id),
    'sessions.editResend': ({ id, seq, text, conversationOnly }) => lifecycle.edits.resend(id, seq, text, conversationOnly),
    'sessions.rename': ({ id, title }) => lifecycle.rename(id, title),
    'transcripts.read': ({ id, before, offset, limit }) => lifecycle.readEarlier(id, before, offset, limit),
    'transcripts.readLater': ({ id, from, offset, limit }) => lifecycle.readLater(id, from, offset, limit)
  }
}
