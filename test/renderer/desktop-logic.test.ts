// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest'
import type { HostEvent } from '../../shared/contract'
import type { AgentCapabilities } from '../../shared/domain'
import type { InboxItem } from '../../shared/inbox'
import { capabilityRows } from '../../renderer/src/components/agents/capabilities'
import { argsFromText, envFromRows, rowsOf, type EnvRow } from '../../renderer/src/components/agents/envRows'
import { createNotifier, isAway, notificationText } from '../../renderer/src/notifications'
import { followLink, onNavigate } from '../../renderer/src/commands'
import { projectLink, sessionLink, type Navigation } from '../../shared/navigation'
import { commandFor, isTextField, keyLabel, matches, shortcuts } from '../../renderer/src/shortcuts'
import { resolveTheme } from '../../renderer/src/theme'

/** The renderer's desktop logic without a DOM: shortcuts, notifications, theme, the agent form's rows, capabilities. */

const key = (k: string, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; shiftKey: boolean; altKey: boolean }> = {}) => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  altKey: false,
  ...mods
})

describe('keyboard shortcuts', () => {
  it('run their command: Ctrl on Linux and Windows, ⌘ on macOS', () => {
    expect(commandFor(key('n', { ctrlKey: true }), false, shortcuts, false)).toBe('new-session')
    expect(commandFor(key('n', { metaKey: true }), false, shortcuts, true)).toBe('new-session')
    expect(commandFor(key('n', { metaKey: true }), false, shortcuts, false)).toBeNull()
    expect(commandFor(key('A', { ctrlKey: true, shiftKey: true }), false, shortcuts, false)).toBe('agents')
    expect(commandFor(key('a', { ctrlKey: true }), false, shortcuts, false)).toBeNull()
    expect(commandFor(key('/', { ctrlKey: true }), false, shortcuts, false)).toBe('shortcuts')
  })

  it('leave plain keys to text fields: ? opens the list only outside one, Ctrl+/ anywhere', () => {
    expect(commandFor(key('?', { shiftKey: true }), false, shortcuts, false)).toBe('shortcuts')
    expect(commandFor(key('?', { shiftKey: true }), true, shortcuts, false)).toBeNull()
    expect(commandFor(key('/', { ctrlKey: true }), true, shortcuts, false)).toBe('shortcuts')
    expect(commandFor(key('n', { ctrlKey: true }), true, shortcuts, false)).toBe('new-session')
    expect(commandFor(key('?', { ctrlKey: true }), false, shortcuts, false)).toBeNull()
  })

  it('know what a text field is', () => {
    const element = (tagName: string, extra: Record<string, unknown> = {}) =>
      ({ tagName, isContentEditable: false, ...extra }) as unknown as EventTarget
    expect(isTextField(element('TEXTAREA'))).toBe(true)
    expect(isTextField(element('INPUT', { type: 'text' }))).toBe(true)
    expect(isTextField(element('INPUT', { type: 'password' }))).toBe(true)
    expect(isTextField(element('INPUT', { type: 'checkbox' }))).toBe(false)
    expect(isTextField(element('BUTTON'))).toBe(false)
    expect(isTextField(element('DIV', { isContentEditable: true }))).toBe(true)
    expect(isTextField(null)).toBe(false)
  })

  it('are shown with the platform’s key names', () => {
    expect(keyLabel('Mod', true)).toBe('⌘')
    expect(keyLabel('Mod', false)).toBe('Ctrl')
    expect(keyLabel('Escape', false)).toBe('Esc')
    expect(matches(key('Enter', { shiftKey: true }), ['Shift', 'Enter'], false)).toBe(true)
    expect(matches(key('Enter'), ['Shift', 'Enter'], false)).toBe(false)
  })
})

describe('notifications', () => {
  const where = { agent: { id: 'a1', name: 'Claude Code' }, project: { id: 'p1', name: 'app' }, session: { id: 's1', title: 'Fix the build' } }
  const permission: InboxItem = {
    ...where,
    id: 'permission:r1',
    kind: 'permission',
    at: '2025-03-01T10:00:00.000Z',
    permission: { requestId: 'r1', title: 'Run rm -rf build', options: [] }
  }
  const finished: InboxItem = { ...where, id: 'finished:s1:t1', kind: 'finished', at: '2025-03-01T10:01:00.000Z', stopReason: 'end_turn' }
  const failed: InboxItem = { ...where, id: 'error:s1:t2', kind: 'error', at: '2025-03-01T10:02:00.000Z', message: 'Agent exited' }
  const signIn: InboxItem = {
    id: 'sign_in:a2',
    kind: 'sign_in',
    at: '2025-03-01T10:03:00.000Z',
    agent: { id: 'a2', name: 'Gemini' },
    summary: 'Gemini needs you to sign in first.'
  }

  it('are shown only while the window is not focused or hidden', () => {
    expect(isAway({ hasFocus: true, hidden: false })).toBe(false)
    expect(isAway({ hasFocus: false, hidden: false })).toBe(true)
    expect(isAway({ hasFocus: true, hidden: true })).toBe(true)
  })

  it('come from the inbox, one for each new item while away, saying which agent and session; a click opens it', () => {
    const shown: { title: string; body?: string; tag?: string; data?: unknown; click: () => void }[] = []
    const opened: string[] = []
    let away = false
    let known: InboxItem[] = [permission]
    const notifier = createNotifier({
      known: () => known,
      open: (item, link) => opened.push(link ?? item.id),
      page: () => ({ hasFocus: !away, hidden: false }),
      show: (title, options, click) => shown.push({ title, body: options.body, tag: options.tag, data: options.data, click })
    })
    const changed = (payload: InboxItem[]): HostEvent => ({ type: 'inbox.changed', payload })
    // In front of the window: nothing shown.
    notifier([changed([permission, finished])])
    expect(shown).toEqual([])
    known = [permission, finished]
    away = true
    // What was there already is not told again; each new item once, also within one batch.
    notifier([changed([permission, finished, failed]), changed([permission, finished, failed, signIn])])
    known = [permission, finished, failed, signIn]
    notifier([changed([permission, finished, failed, signIn])])
    expect(shown.map((n) => [n.title, n.body, n.tag])).toEqual([
      ['Claude Code stopped with an error', '“Fix the build”: Agent exited', 'error:s1:t2'],
      ['Gemini needs you to sign in', 'Gemini needs you to sign in first.', 'sign_in:a2']
    ])
    shown[1].click()
    expect(opened).toEqual(['sign_in:a2'])
    // One about a session carries its link, and a click follows it.
    expect(shown[0].data).toBe('switchboard://session/s1')
    shown[0].click()
    expect(opened).toEqual(['sign_in:a2', 'switchboard://session/s1'])
    expect(notificationText(permission)).toEqual({ title: 'Claude Code asks for permission', body: 'Run rm -rf build — in “Fix the build”' })
    expect(notificationText(finished)).toEqual({ title: 'Claude Code finished', body: '“Fix the build” is waiting for you' })
    // A turn stopped short says how, in words (never "max_tokens").
    expect(notificationText({ ...finished, stopReason: 'max_tokens' })).toEqual({
      title: 'Claude Code: Stopped: token limit',
      body: '“Fix the build” is waiting for you'
    })
  })

  it('follow a session’s link as a link from outside goes (app.navigate’s handler); anything else is ignored', () => {
    const went: Navigation[] = []
    const stop = onNavigate((navigation) => went.push(navigation))
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      expect(followLink(sessionLink('s1'))).toBe(true)
      expect(followLink('switchboard://session/../../etc')).toBe(false)
      expect(followLink(projectLink('/home/me/app'))).toBe(false)
      expect(went).toEqual([{ kind: 'session', id: 's1' }])
      expect(warn).toHaveBeenCalledTimes(2)
    } finally {
      stop()
      warn.mockRestore()
    }
  })

  it('write out an override in the agent’s words and cut what is long: the system shows them as they are', () => {
    const { body } = notificationText({
      ...permission,
      session: { id: 's1', title: 'Rename \u202Efdp.exe' },
      permission: { requestId: 'r1', title: `Delete \u202Etxt.exe ${'x'.repeat(5_000)}`, options: [] }
    })
    expect(body).toMatch(/^Delete ⟨RLO⟩txt\.exe x+… — in “Rename ⟨RLO⟩fdp\.exe”$/)
    expect(body.length).toBeLessThan(700)
  })
})

describe('the theme', () => {
  it('follows the system unless the user chose light or dark', () => {
    expect(resolveTheme('system', true)).toBe('dark')
    expect(resolveTheme('system', false)).toBe('light')
    expect(resolveTheme('light', true)).toBe('light')
    expect(resolveTheme('dark', false)).toBe('dark')
  })
})

describe('the agent form', () => {
  const row = (name: string, value: string, secret = false, storedAs?: string): EnvRow => ({ key: Math.random(), name, value, secret, storedAs })

  it('sends plain variables, new secrets with their value, and untouched stored secrets as null', () => {
    expect(envFromRows([row('MODE', 'fast'), row('NEW_KEY', 'abc', true), row('OLD_KEY', '', true, 'OLD_KEY'), row('', '')])).toEqual({
      env: { MODE: 'fast' },
      secretEnv: { NEW_KEY: 'abc', OLD_KEY: null }
    })
    // Typed over: replaced. Renamed: the stored value does not follow the new name.
    expect(envFromRows([row('OLD_KEY', 'new', true, 'OLD_KEY')]).secretEnv).toEqual({ OLD_KEY: 'new' })
    expect(() => envFromRows([row('RENAMED', '', true, 'OLD_KEY')])).toThrow('RENAMED is marked secret: type its value')
    expect(() => envFromRows([row('', 'orphan')])).toThrow('A variable has a value but no name')
    expect(() => envFromRows([row('A', '1'), row('A', '2', true)])).toThrow('A is listed twice')
  })

  it('shows an agent’s secrets as stored, never with a value', () => {
    const rows = rowsOf({ command: 'a', args: [], env: { MODE: 'x' }, secretEnv: ['TOKEN'] })
    expect(rows.map(({ name, value, secret, storedAs }) => ({ name, value, secret, storedAs }))).toEqual([
      { name: 'MODE', value: 'x', secret: false, storedAs: undefined },
      { name: 'TOKEN', value: '', secret: true, storedAs: 'TOKEN' }
    ])
  })

  it('takes arguments one per line, spaces kept', () => {
    expect(argsFromText('--acp\n\n--model\nclaude sonnet\r\n')).toEqual(['--acp', '--model', 'claude sonnet'])
  })
})

describe('capabilities', () => {
  it('are listed in words, each supported or not', () => {
    const capabilities: AgentCapabilities = {
      protocolVersion: 1,
      loadSession: true,
      prompt: { image: true, audio: false, embeddedContext: true },
      mcp: { stdio: true, http: true, sse: false },
      session: { list: true, resume: false, close: false, delete: true, fork: false, additionalDirectories: true, systemPrompt: false },
      auth: { logout: true }
    }
    const rows = capabilityRows(capabilities)
    expect(rows.filter((r) => r.supported).map((r) => r.id)).toEqual([
      'load',
      'list',
      'delete',
      'directories',
      'image',
      'embedded',
      'mcp-http',
      'logout'
    ])
    expect(rows.map((r) => r.id)).toEqual([
      'load',
      'resume',
      'list',
      'close',
      'delete',
      'fork',
      'directories',
      'system-prompt',
      'image',
      'audio',
      'embedded',
      'mcp-http',
      'mcp-sse',
      'logout'
    ])
  })
})
