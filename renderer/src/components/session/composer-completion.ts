import { computed, nextTick, ref, type Ref } from 'vue'
import type { AvailableCommand } from '@agentclientprotocol/sdk'
import { applyCompletion, matchCommands, triggerAt, type Mention, type Trigger } from '../../composer/completion'
import { messageOf } from '../../host/client'
import { useFilesStore } from '../../stores/files'
import { useProjectsStore } from '../../stores/projects'
import { useThreadsStore } from '../../stores/threads'

export interface CompletionItem {
  key: string
  label: string
  detail?: string
  hint?: string
  insert: string
  mention?: Mention
}

export type FilesState = 'idle' | 'loading' | 'error'

/**
 * The composer's completion: the agent's slash commands after a `/` at the
 * start, the project's files after an `@`. It looks at the text before the
 * caret after each edit or caret move; `onKey` takes the keys the open list
 * answers (arrows move, Enter or Tab picks, Esc closes) and says whether it
 * took the key. A chosen file is remembered in `mentions` until sent.
 */
export function useComposerCompletion(options: { sessionId: () => string; draft: Ref<string>; input: Ref<HTMLTextAreaElement | null> }) {
  const threads = useThreadsStore()
  const projects = useProjectsStore()
  const filesStore = useFilesStore()
  const { draft, input } = options

  const completion = ref<Trigger | null>(null)
  const active = ref(0)
  /** Where the user closed a completion with Esc: it stays closed until the trigger changes. */
  const dismissedAt = ref<number | null>(null)
  const mentions = ref<Mention[]>([])
  const files = ref<{ path: string; relative: string }[]>([])
  const filesState = ref<FilesState>('idle')
  const filesError = ref('')
  const filesTruncated = ref(false)
  let filesRequest = 0

  const commands = computed<AvailableCommand[]>(() => threads.threads[options.sessionId()]?.thread.commands ?? [])
  const projectId = computed(() => projects.sessionById(options.sessionId())?.projectId)

  const completionItems = computed<CompletionItem[]>(() => {
    const trigger = completion.value
    if (!trigger) return []
    if (trigger.kind === 'command') {
      return matchCommands(commands.value, trigger.query).map((c) => ({
        key: c.name,
        label: `/${c.name}`,
        detail: c.description,
        hint: c.input && 'hint' in c.input ? c.input.hint : undefined,
        insert: `/${c.name}`
      }))
    }
    return files.value.map((f) => ({ key: f.path, label: f.relative, insert: `@${f.relative}`, mention: { relative: f.relative, path: f.path } }))
  })

  const listId = computed(() => `completion-${options.sessionId()}`)

  function closeCompletion(): void {
    completion.value = null
    active.value = 0
  }

  /** Looks at the text before the caret after each edit or caret move. */
  function updateCompletion(): void {
    const field = input.value
    if (!field) return
    const trigger = triggerAt(draft.value, field.selectionStart ?? draft.value.length)
    if (!trigger || (trigger.kind === 'command' && commands.value.length === 0) || (trigger.kind === 'file' && !projectId.value)) {
      dismissedAt.value = null
      closeCompletion()
      return
    }
    if (dismissedAt.value === trigger.start) return
    const changed = completion.value?.kind !== trigger.kind || completion.value.query !== trigger.query || completion.value.start !== trigger.start
    completion.value = trigger
    if (changed) active.value = 0
    if (changed && trigger.kind === 'file') void loadFiles(trigger.query)
  }

  /** The keys the open list answers; true when the key was taken. */
  function onKey(event: KeyboardEvent): boolean {
    if (completion.value && completionItems.value.length > 0) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault()
        const n = completionItems.value.length
        active.value = (active.value + (event.key === 'ArrowDown' ? 1 : n - 1)) % n
        return true
      }
      if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
        event.preventDefault()
        void choose(active.value)
        return true
      }
    }
    if (completion.value && event.key === 'Escape') {
      event.preventDefault()
      event.stopPropagation()
      dismissedAt.value = completion.value.start
      closeCompletion()
      return true
    }
    return false
  }

  async function loadFiles(query: string): Promise<void> {
    const id = ++filesRequest
    const project = projectId.value
    if (!project) return
    filesState.value = 'loading'
    try {
      const result = await filesStore.list(project, query, 30)
      if (id !== filesRequest) return
      files.value = result.files
      filesTruncated.value = result.truncated
      filesState.value = 'idle'
    } catch (error) {
      if (id !== filesRequest) return
      files.value = []
      filesError.value = messageOf(error)
      filesState.value = 'error'
    }
  }

  async function choose(index: number): Promise<void> {
    const trigger = completion.value
    const item = completionItems.value[index]
    const field = input.value
    if (!trigger || !item || !field) return
    const next = applyCompletion(draft.value, field.selectionStart ?? draft.value.length, trigger, item.insert)
    draft.value = next.text
    const mention = item.mention
    if (mention) mentions.value = [...mentions.value.filter((m) => m.path !== mention.path), mention]
    closeCompletion()
    await nextTick()
    field.focus()
    field.setSelectionRange(next.caret, next.caret)
  }

  return {
    completion,
    active,
    mentions,
    filesState,
    filesError,
    filesTruncated,
    commands,
    completionItems,
    listId,
    closeCompletion,
    updateCompletion,
    onKey,
    choose
  }
}
