import { defineStore } from 'pinia'
import type { SearchResults } from '../../../shared/search'
import { host } from '../host/client'

/**
 * The search over project names, conversation titles and everything said in
 * every conversation, as the search palette asks it. Nothing is kept: each
 * answer is for the query typed. Throws the Host's message.
 */
export const useSearchStore = defineStore('search', () => {
  /** At most `limit` hits for `q`, grouped; `indexing` while the index is still being built (ask again as it fills). */
  function query(q: string, limit: number): Promise<SearchResults> {
    return host().request('search.query', { q, limit })
  }

  return { query }
})
