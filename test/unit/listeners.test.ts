import { describe, expect, it } from 'vitest'
import { Listeners } from '../../electron/host/contract/listeners'

/**
 * A room's news (a turn over, a session detached, an agent ended) reaches every
 * room that follows it: a second listener does not replace the first, as the
 * single-slot hooks it replaces did.
 */
describe('Listeners', () => {
  it('tells every listener, in order, and stops telling one that was removed', () => {
    const heard: string[] = []
    const news = new Listeners<[id: string, hold: string | null]>()
    news.add((id, hold) => heard.push(`queue ${id} ${hold}`))
    const stop = news.add((id) => heard.push(`inbox ${id}`))
    news.tell('s1', null)
    stop()
    news.tell('s2', 'held')
    expect(heard).toEqual(['queue s1 null', 'inbox s1', 'queue s2 held'])
  })

  it('tells the others when one throws, then throws its error', () => {
    const heard: string[] = []
    const news = new Listeners<[id: string]>()
    news.add(() => {
      throw new Error('broken listener')
    })
    news.add((id) => heard.push(id))
    expect(() => news.tell('s1')).toThrow('broken listener')
    expect(heard).toEqual(['s1'])
  })
})
