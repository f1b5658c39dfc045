import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_REGISTRY_URL, registryAgentSchema, type RegistryAgent, type RegistrySnapshot } from '../shared/registry'

/**
 * Rebuilds the registry snapshot bundled with the app
 * (electron/host/acp-registry/snapshot.json) from a checkout of
 * github.com/agentclientprotocol/registry, the way its own build assembles the
 * feed: each `<id>/agent.json`, with its `<id>/icon.svg` kept beside it.
 *
 *   npx tsx build/registry-snapshot.ts <registry checkout> [date of its last commit]
 */

const [checkout, date] = process.argv.slice(2)
if (!checkout) {
  console.error('usage: tsx build/registry-snapshot.ts <registry checkout> [ISO date]')
  process.exit(2)
}
const agents: RegistryAgent[] = []
const icons: Record<string, string> = {}
for (const folder of readdirSync(checkout, { withFileTypes: true })) {
  if (!folder.isDirectory() || folder.name.startsWith('.') || folder.name.startsWith('_')) continue
  const file = join(checkout, folder.name, 'agent.json')
  if (!existsSync(file)) continue
  const parsed = registryAgentSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')))
  if (!parsed.success) {
    console.error(`skipped ${folder.name}: ${parsed.error.message}`)
    continue
  }
  const icon = join(checkout, folder.name, 'icon.svg')
  if (existsSync(icon)) {
    icons[parsed.data.id] = readFileSync(icon, 'utf8')
    parsed.data.icon = `${DEFAULT_REGISTRY_URL.replace(/registry\.json$/, '')}${parsed.data.id}.svg`
  }
  agents.push(parsed.data)
}
agents.sort((a, b) => a.name.localeCompare(b.name))
const snapshot: RegistrySnapshot = { url: DEFAULT_REGISTRY_URL, fetchedAt: new Date(date ?? Date.now()).toISOString(), agents, icons }
const out = new URL('../electron/host/acp-registry/snapshot.json', import.meta.url)
writeFileSync(out, `${JSON.stringify(snapshot, null, 1)}\n`)
console.log(`${agents.length} agents written to ${out.pathname}`)
