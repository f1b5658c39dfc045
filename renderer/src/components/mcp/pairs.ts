/** One environment variable or HTTP header of an MCP profile, as its editor holds it. */
export interface PairRow {
  name: string
  value: string
  secret: boolean
  /** A secret whose value is already stored: an empty value keeps it. */
  stored: boolean
}
