import { defineStore } from 'pinia'
import { host, HostRequestError, messageOf } from '../host/client'
import { useNoticesStore } from './notices'
import { useUiStore } from './ui'

/**
 * A session's own settings, as its header's controls and the confirmation dialog change them: its mode, its model,
 * its other config options. The new values arrive in the session's thread (`session.records`); a refusal goes to
 * the banner. A mode that lets the agent act without asking is confirmed once per agent: the Host refuses it
 * (`skip_permissions_unconfirmed`) until then, and the question goes to the confirmation dialog
 * (`ui.confirmation`), which sets it again with `confirmSkip`.
 */
export const useSessionSettingsStore = defineStore('session-settings', () => {
  const notices = useNoticesStore()

  async function setMode(id: string, modeId: string, confirmSkip?: boolean): Promise<void> {
    await askingToSkip(id, { modeId }, () => host().request('sessions.setMode', { id, modeId, ...(confirmSkip ? { confirmSkip } : {}) }))
  }

  async function setConfigOption(id: string, configId: string, value: string | boolean, confirmSkip?: boolean): Promise<void> {
    const send = () => host().request('sessions.setConfigOption', { id, configId, value, ...(confirmSkip ? { confirmSkip } : {}) })
    if (typeof value === 'boolean') await notices.attempt(send)
    else await askingToSkip(id, { configId, value }, send)
  }

  /** An agent that offers its models by the older `set_model` (not as a config option). */
  async function setModel(id: string, modelId: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.setModel', { id, modelId }))
  }

  async function askingToSkip(
    id: string,
    choice: { modeId: string } | { configId: string; value: string },
    send: () => Promise<unknown>
  ): Promise<void> {
    try {
      await send()
    } catch (error) {
      if (error instanceof HostRequestError && error.code === 'skip_permissions_unconfirmed') {
        useUiStore().confirmation = { kind: 'skip-permissions', sessionId: id, message: error.message, choice }
      } else notices.report(messageOf(error))
    }
  }

  return { setMode, setConfigOption, setModel }
})
