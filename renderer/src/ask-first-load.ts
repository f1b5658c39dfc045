import type { WireResponse } from '../../shared/contract'
import { FIRST_LOAD, type FirstLoad } from './first-load'
import type { HostClient } from './host/client'
import { checkedAnswer } from './host/transport'

/**
 * The first load: the answers that came with the first screen the page's first script asked for (main.ts), when
 * it did; else (or any answer that did not come well formed) asked for now.
 */
export async function askFirstLoad(client: HostClient): Promise<FirstLoad> {
  const early = await earlyFirstLoad(client)
  const answers = Promise.all(
    FIRST_LOAD.map(([method, params], index) => {
      const answer = early?.[index]
      return answer ? client.answerOf(method, answer) : client.request(method, params)
    })
  )
  // One answer per request, in order (Promise.all keeps it): FirstLoad gives each its method's result type.
  return answers as Promise<unknown> as Promise<FirstLoad>
}

/**
 * The first load's answers in the answer to the page's first request (`app.firstScreen`, main.ts), each checked
 * as the transport checks an answer (a malformed one is null: asked for again); null when there is none.
 */
async function earlyFirstLoad(client: HostClient): Promise<(WireResponse | null)[] | null> {
  const early = client.earlyAnswers()?.[0]
  if (!early) return null
  const screen = await client.answerOf('app.firstScreen', early).catch(() => null)
  if (!screen || !Array.isArray(screen.answers) || screen.answers.length !== FIRST_LOAD.length) return null
  return screen.answers.map((answer: unknown, index) => {
    const checked = checkedAnswer(answer)
    if (!checked) console.error(`Malformed answer from the host to ${FIRST_LOAD[index][0]}; asking again`, answer)
    return checked
  })
}
