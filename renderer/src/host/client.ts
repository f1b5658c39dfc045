import type { CommandChange } from '../../../shared/confirmation'
import type {
  HostEvent,
  HostEventName,
  HostEvents,
  HostTransport,
  RequestMethod,
  RequestParams,
  RequestResult,
  WireResponse
} from '../../../shared/contract'
import type { AgentProblem } from '../../../shared/domain'
import type { HostErrorCode } from '../../../shared/errors'

/**
 * A request the Host refused, with its message; `code` lets a view act on it
 * (e.g. `auth_required`), and `problem` says what went wrong with an agent, in parts.
 */
export class HostRequestError extends Error {
  constructor(
    message: string,
    readonly method: RequestMethod,
    readonly code?: HostErrorCode,
    readonly problem?: AgentProblem
  ) {
    super(message)
    this.name = 'HostRequestError'
  }
}

/**
 * What the window asks the user when the Host wants a change confirmed with
 * the code `serve` printed on its console: the change, and why the last code
 * typed was refused. The answer: the code typed, `again` for a new code, or
 * null (cancelled).
 */
export type AskForCode = (question: { confirmation: CommandChange; refusal?: string; fresh?: boolean }) => Promise<{ code: string } | 'again' | null>

/** The typed contract client: the renderer's only way to the Host. */
export class HostClient {
  private readonly batchListeners = new Set<(events: HostEvent[]) => void>()
  private askForCode: AskForCode | null = null
  /** Batches kept until `releaseEvents` (`holdEvents`); null: handed to the listeners as they come. */
  private held: HostEvent[][] | null = null

  /** `transport`: a window's (transport.ts) may hold the answers to a first load asked for early. */
  constructor(private readonly transport: HostTransport & { earlyAnswers?(): Promise<WireResponse>[] | null }) {
    transport.onEvents((events) => {
      if (this.held) this.held.push(events)
      else for (const listener of this.batchListeners) listener(events)
    })
  }

  /**
   * Keeps the batches that come from now on until `releaseEvents`: the window applies its first load before
   * it mounts, and its listeners (the notifier, then the stores' router) listen from the mount on.
   */
  holdEvents(): void {
    this.held ??= []
  }

  /** Hands the batches kept to the listeners, in the order they came, and stops keeping them. */
  releaseEvents(): void {
    const held = this.held ?? []
    this.held = null
    for (const events of held) for (const listener of this.batchListeners) listener(events)
  }

  /**
   * Resolves with the method's result; rejects with the Host's own message when it refuses.
   * A change the Host wants confirmed with a console code (`serve`) asks the user for it
   * (`onConfirmationCode`) and is sent again with the code, until it is done or cancelled.
   */
  async request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<RequestResult<M>> {
    let response = await this.transport.request(method, params)
    if (!response.ok && response.error.code === 'confirmation_required' && response.error.confirmation && this.askForCode) {
      response = await this.confirmWithCode(method, params, response.error.confirmation, this.askForCode)
    }
    return resultOf(method, response)
  }

  /** The answers to the first load the page's first script asked for (early-link.ts), in order, once; else null. */
  earlyAnswers(): Promise<WireResponse>[] | null {
    return this.transport.earlyAnswers?.() ?? null
  }

  /** An answer from `earlyAnswers` (or carried in one) as `request` would give it: the result, or the Host's refusal thrown. */
  async answerOf<M extends RequestMethod>(method: M, answer: WireResponse | Promise<WireResponse>): Promise<RequestResult<M>> {
    return resultOf(method, await answer)
  }

  /** Who asks the user for the code `serve` printed (the window's code dialog); without one, such a change fails with the Host's message. */
  onConfirmationCode(ask: AskForCode): void {
    this.askForCode = ask
  }

  private async confirmWithCode(method: RequestMethod, params: unknown, confirmation: CommandChange, ask: AskForCode): Promise<WireResponse> {
    let question: Parameters<AskForCode>[0] = { confirmation }
    for (;;) {
      const answer = await ask(question)
      if (answer === null) return { ok: false, error: { message: 'Not confirmed: nothing was changed.', code: 'confirmation_refused' } }
      if (answer === 'again') {
        // Sent again without a code: serve prints a new one.
        const response = await this.transport.request(method, params)
        if (response.ok || response.error.code !== 'confirmation_required' || !response.error.confirmation) return response
        question = { confirmation: response.error.confirmation, fresh: true }
        continue
      }
      const response = await this.transport.request(method, { ...(params as object), confirmationCode: answer.code })
      if (response.ok || response.error.code !== 'confirmation_refused') return response
      question = { confirmation, refusal: response.error.message }
    }
  }

  /** Every batch of events as the Host sent it: applying a batch in one go renders once. */
  onBatch(listener: (events: HostEvent[]) => void): () => void {
    this.batchListeners.add(listener)
    return () => this.batchListeners.delete(listener)
  }

  on<K extends HostEventName>(type: K, listener: (payload: HostEvents[K]) => void): () => void {
    return this.onBatch((events) => {
      for (const event of events) if (event.type === type) listener(event.payload as HostEvents[K])
    })
  }
}

let installed: HostClient | null = null

/** Called once at start-up (open-window.ts) with the transport it picked. */
export function installHost(client: HostClient): void {
  installed = client
}

export function host(): HostClient {
  if (!installed) throw new Error('The Switchboard host client is not installed yet')
  return installed
}

/** The message to show for a failed request. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function resultOf<M extends RequestMethod>(method: M, response: WireResponse): RequestResult<M> {
  if (!response.ok) throw new HostRequestError(response.error.message, method, response.error.code, response.error.problem)
  return response.result as RequestResult<M>
}
