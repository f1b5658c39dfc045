import { computed, ref, type Ref } from 'vue'
import type { Attachment } from '../../../../shared/contract'
import { useAgentsStore } from '../../stores/agents'

export interface PendingAttachment {
  label: string
  /** A data: URL of a pasted or dropped image, shown small in its chip. */
  preview?: string
  attachment: Attachment
}

/**
 * What the composer sends besides its text: images and text files, pasted or
 * dropped, as far as the agent accepts them (`accepts`); what cannot be
 * attached is said in `attachError`, naming the agent.
 */
export function useComposerAttachments(options: { agentId: () => string; agentName: Ref<string> }) {
  const agents = useAgentsStore()
  const attachments = ref<PendingAttachment[]>([])
  const attachError = ref('')
  const accepts = computed(() => agents.stateOf(options.agentId())?.capabilities?.prompt)
  const dragging = ref(false)

  async function attach(files: FileList | File[]): Promise<void> {
    attachError.value = ''
    for (const file of Array.from(files)) {
      if (file.type.startsWith('image/')) {
        if (accepts.value && !accepts.value.image) {
          attachError.value = `${options.agentName.value} does not accept images`
          continue
        }
        const data = await base64(file)
        attachments.value.push({
          label: file.name || 'image',
          preview: `data:${file.type};base64,${data}`,
          attachment: { type: 'image', data, mimeType: file.type }
        })
      } else if (file.type.startsWith('text/') || file.type === '' || file.type === 'application/json') {
        if (accepts.value && !accepts.value.embeddedContext) {
          attachError.value = `${options.agentName.value} does not accept attached files`
          continue
        }
        attachments.value.push({
          label: file.name,
          attachment: {
            type: 'resource',
            uri: `file:///${encodeURIComponent(file.name)}`,
            text: await file.text(),
            mimeType: file.type || 'text/plain'
          }
        })
      } else {
        attachError.value = `Cannot attach ${file.name}: only images and text files can be sent`
      }
    }
  }

  function onPaste(event: ClipboardEvent): void {
    const files = event.clipboardData?.files
    if (files && files.length > 0) {
      event.preventDefault()
      void attach(files)
    }
  }

  function onDrop(event: DragEvent): void {
    dragging.value = false
    const files = event.dataTransfer?.files
    if (files && files.length > 0) void attach(files)
  }

  return { attachments, attachError, accepts, dragging, onPaste, onDrop }
}

async function base64(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}
