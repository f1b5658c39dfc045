import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { PermissionRule } from '../../../shared/domain'
import { host } from '../host/client'
import { useNoticesStore } from './notices'

/** Remembered "always" answers to permission requests, per agent, project and tool kind. */
export const usePermissionsStore = defineStore('permissions', () => {
  const rules = ref<PermissionRule[]>([])

  function rulesFor(agentId: string, projectId: string): PermissionRule[] {
    return rules.value.filter((r) => r.agentId === agentId && r.projectId === projectId)
  }

  async function revoke(ruleId: string): Promise<void> {
    await useNoticesStore().attempt(() => host().request('permissions.revoke', { ruleId }))
  }

  return { rules, rulesFor, revoke }
})
