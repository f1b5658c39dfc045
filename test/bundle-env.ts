/** The environment variables naming the one-file builds that test/bundles.ts makes once per vitest run. */

/** The scripted agent's build, for `scriptedAgentCommand()` (agent/spawn.ts). */
export const SCRIPTED_AGENT_BUNDLE_ENV = 'SCRIPTED_AGENT_BUNDLE'
/** The tiny MCP server's build, for `tinyServerCommand()` (mcp/tiny-server.ts). */
export const TINY_SERVER_BUNDLE_ENV = 'TINY_MCP_SERVER_BUNDLE'
