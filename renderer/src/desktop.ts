import { onBeforeUnmount, watchEffect } from 'vue'
import type { Project } from '../../shared/domain'
import { agentFitsProject } from '../../shared/agent-definition'
import { followLink, onAppCommand, onNavigate, runAppCommand } from './commands'
import { host, messageOf } from './host/client'
import { askNotificationPermissionOnFirstGesture, createNotifier } from './notifications'
import { commandFor, isTextField } from './shortcuts'
import { useAgentsStore } from './stores/agents'
import { useContactStore } from './stores/contact'
import { useInboxStore } from './stores/inbox'
import { useNoticesStore } from './stores/notices'
import { usePresetsStore } from './stores/presets'
import { useProjectsStore } from './stores/projects'
import { useSessionsStore } from './stores/sessions'
import { useSettingsStore } from './stores/settings'
import { useThemeStore } from './stores/theme'
import { useMcpStore } from './stores/mcp'
import { usePanesStore } from './stores/panes'
import { paneFocusTarget } from './components/window/pane-keys'
import { useUiStore } from './stores/ui'
import { useViewStore } from './stores/view'

/**
 * The desktop behaviour of the window, wired once from App.vue: the theme,
 * window-wide keyboard shortcuts, what the app commands do (from the native
 * menu or a shortcut), the inbox's count in the window's title (the Electron
 * shell's dock badge follows the Host's `inbox.changed`), whether the window
 * has the focus (what it shows is then seen), and notifications of what is new
 * in the inbox while the window is in the background.
 * Call it in App's setup, before the app store starts (so the notifier sees
 * each state change before the stores apply it).
 */
export function useDesktop(): void {
  useThemeStore()
  const view = useViewStore()
  const notices = useNoticesStore()
  const agents = useAgentsStore()
  const projects = useProjectsStore()
  const sessions = useSessionsStore()
  const settings = useSettingsStore()
  const inbox = useInboxStore()
  const ui = useUiStore()

  const cleanups = [
    onAppCommand('inbox', () => {
      view.shortcutsOpen = false
      if (inbox.open) inbox.open = false
      else inbox.show()
    }),
    onAppCommand('shortcuts', () => (view.shortcutsOpen = !view.shortcutsOpen)),
    onAppCommand('agents', () => {
      view.shortcutsOpen = false
      view.show('agents')
    }),
    onAppCommand('new-session', () => void newSession()),
    onAppCommand('new-session-picker', () => openNewSessionPicker()),
    onAppCommand('mcp', () => {
      view.shortcutsOpen = false
      useMcpStore().openPage()
    }),
    onAppCommand('spend', () => {
      view.shortcutsOpen = false
      view.show('spend')
    }),
    // `switchboard open`, `switchboard <folder>`, a switchboard:// link: the session, or the project's New session menu.
    onNavigate((navigation) => {
      view.shortcutsOpen = false
      if (navigation.kind === 'session') {
        openNotified(navigation.id).catch((error: unknown) => notices.report(messageOf(error)))
        return
      }
      view.show('sessions')
      ui.newSessionPicker = navigation.id
    })
  ]

  /**
   * A notification's session, in the focused pane, with the keyboard in it (its request's safe answer, else its
   * composer): a page it was over closes, and the focus it gives back to its opener would leave the request's keys
   * out of reach.
   */
  async function openNotified(id: string): Promise<void> {
    await sessions.open(id)
    // Once the page has closed and given its focus back.
    await new Promise((resolve) => setTimeout(resolve))
    paneFocusTarget(usePanesStore().focused.id)?.target.focus()
  }

  /** The open session's project, else the first: the one a new session goes to. */
  function currentProject(): Project | undefined {
    return projects.projectById(sessions.openSession?.projectId ?? '') ?? projects.projects[0]
  }

  /** Opens the current project's New session menu (its agents, presets and place), the sidebar showing it. */
  function openNewSessionPicker(): void {
    view.shortcutsOpen = false
    const project = currentProject()
    view.show('sessions')
    if (!project) {
      document.querySelector<HTMLElement>('[data-testid=add-project-path], [data-testid=add-project-submit]')?.focus()
      return
    }
    ui.newSessionPicker = project.id
  }

  /** In the open session's project with its agent; else the first project and the agent chosen for it, or the first installed. */
  async function newSession(): Promise<void> {
    view.shortcutsOpen = false
    if (view.activity) return
    const current = sessions.openSession
    const project = currentProject()
    if (!project) {
      view.show('sessions')
      document.querySelector<HTMLElement>('[data-testid=add-project-path], [data-testid=add-project-submit]')?.focus()
      return
    }
    // Only an agent that runs where the project is (on its host, over SSH, or here).
    const fitting = agents.definitions.filter((a) => agentFitsProject(a, project))
    // The project's New session button left on a preset: that preset, as its main part would start it.
    const presets = usePresetsStore()
    await presets.ensure().catch(() => undefined)
    const preset = presets.byId(settings.values.projectPresets?.[project.id])
    if (preset && fitting.some((a) => a.id === preset.agentId)) {
      view.activity = `Starting a session from the preset ${preset.name} in ${project.name}…`
      try {
        await useContactStore().start(project.id, preset.agentId, { presetId: preset.id })
      } catch (error) {
        notices.report(messageOf(error))
      } finally {
        view.activity = null
      }
      return
    }
    const agent =
      fitting.find((a) => a.id === current?.agentId) ??
      fitting.find((a) => a.id === settings.values.projectAgents?.[project.id]) ??
      fitting.find((a) => agents.stateOf(a.id)?.installed !== false) ??
      fitting[0]
    if (!agent) {
      view.show('agents')
      return
    }
    view.activity = `Starting a session with ${agent.name} in ${project.name}…`
    try {
      // The focused pane shows the agent starting, and why it could not start the session if it could not.
      await useContactStore().start(project.id, agent.id)
    } catch (error) {
      notices.report(messageOf(error))
    } finally {
      view.activity = null
    }
  }

  function onKey(event: KeyboardEvent): void {
    if (event.defaultPrevented || event.isComposing) return
    const inTextField = isTextField(event.target)
    const page = view.page === 'agents' || view.page === 'spend' || view.page === 'race'
    if (event.key === 'Escape' && page && !view.shortcutsOpen && !inTextField && !document.querySelector('dialog[open]')) {
      event.preventDefault()
      view.show('sessions')
      return
    }
    const command = commandFor(event, inTextField)
    if (command && runAppCommand(command)) event.preventDefault()
  }
  window.addEventListener('keydown', onKey)
  cleanups.push(() => window.removeEventListener('keydown', onKey))

  // `(3) Switchboard`: the window's title says how much waits (the taskbar and the window switcher show it).
  const title = document.title
  const stopTitle = watchEffect(() => (document.title = inbox.count ? `(${inbox.count}) ${title}` : title))
  cleanups.push(() => stopTitle())

  const followFocus = (): void => {
    inbox.windowFocused = document.hasFocus() && document.visibilityState !== 'hidden'
  }
  followFocus()
  window.addEventListener('focus', followFocus)
  window.addEventListener('blur', followFocus)
  document.addEventListener('visibilitychange', followFocus)
  cleanups.push(() => {
    window.removeEventListener('focus', followFocus)
    window.removeEventListener('blur', followFocus)
    document.removeEventListener('visibilitychange', followFocus)
  })

  cleanups.push(
    host().onBatch(
      createNotifier({
        known: () => inbox.items,
        // A session's item follows its switchboard://session/<id> link, as a link from outside goes (its request or
        // question is shown there too); an agent's opens the inbox.
        open: (item, link) => (link ? void followLink(link) : inbox.show(item.id))
      })
    )
  )
  askNotificationPermissionOnFirstGesture()

  onBeforeUnmount(() => {
    for (const cleanup of cleanups) cleanup()
  })
}
