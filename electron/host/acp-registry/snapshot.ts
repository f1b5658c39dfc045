import type { RegistrySnapshot } from '../../../shared/registry'
import bundled from './snapshot.json'

/**
 * The registry as it was when this build was made (build/registry-snapshot.ts
 * makes snapshot.json from a checkout of agentclientprotocol/registry): what
 * the Agents page shows when neither the feed nor the copy kept in the data
 * folder can be read, so a first start offline still lists agents.
 */
export function bundledRegistry(): RegistrySnapshot {
  return bundled as RegistrySnapshot
}
