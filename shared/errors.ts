/**
 * The codes a failed request may carry, so the renderer acts on the kind of
 * failure rather than on its sentence. Written once here: the Host and the
 * transports produce them, the renderer reads them.
 *
 * - `unknown_method`: the method is not in the contract
 * - `invalid_params`: the parameters did not pass the contract's schema
 * - `invalid_request`: a WebSocket message that is not a request
 * - `forbidden`: an IPC message from something other than the app's window
 * - `auth_required`: the agent needs the user to sign in (ACP auth_required); the message lists how
 * - `git_missing`: git is not installed (worktrees, checkpoints and review need it)
 * - `not_a_repository`: a worktree was asked for in a folder that is not a git repository
 * - `branch_exists`: the branch a new worktree would create is already there
 * - `worktree_in_the_way`: a folder already stands where the new worktree would go
 * - `worktree_dirty`: removing a worktree would drop uncommitted work; the message lists it
 * - `review_stale`: the file changed since the Changes view showed it; look again
 * - `merge_conflict`: merging a session's branch would conflict; the message lists the files
 * - `uv_missing`: a registry agent distributed for uvx needs uv, which is not installed; the message says how to get it
 * - `download_failed`: a registry agent's archive could not be downloaded whole; nothing was installed
 * - `archive_refused`: a registry agent's archive is not usable (unknown format, entries or links leaving its folder, no command)
 * - `reopen_failed`: the agent could not reopen a past conversation (load or resume failed); the view is kept and the session's state offers a new session given it as context
 * - `turn_failed`: the turn failed (the agent failed it, or stopped mid-turn); the thread already shows why as the turn's error entry, so the window does not say it again
 * - `agent_failed`: the agent could not start a session (not installed, its process failed to start, or session/new failed); the error's `problem` says what happened, with the stderr lines that explain it
 * - `confirmation_required`: the change would run a program and must be confirmed outside the page: under `npm run serve`, with the code printed on its console, sent again as `confirmationCode`; the error's `confirmation` says what is confirmed. Nothing was changed
 * - `confirmation_refused`: the change was not confirmed (the dialog cancelled, a wrong, used or expired code, or no way to ask); nothing was changed
 * - `checkpoint_missing`: "Edit and resend" cannot put the files back (no checkpoint before that message, or git failed): sent again with `conversationOnly`, the files stay as they are; nothing was changed
 * - `skip_permissions_unconfirmed`: the mode chosen lets the agent act without asking, and the user has not yet confirmed that for this agent: ask, then send again with `confirmSkip`; nothing was changed
 *
 * A failure that concerns the agent (`auth_required`, `agent_failed`) carries an
 * `AgentProblem` (shared/domain.ts) beside its message, for the window to show
 * once with what to do.
 */
export const hostErrorCodes = [
  'unknown_method',
  'invalid_params',
  'invalid_request',
  'forbidden',
  'auth_required',
  'git_missing',
  'not_a_repository',
  'branch_exists',
  'worktree_in_the_way',
  'worktree_dirty',
  'review_stale',
  'merge_conflict',
  'uv_missing',
  'download_failed',
  'archive_refused',
  'reopen_failed',
  'turn_failed',
  'agent_failed',
  'confirmation_required',
  'confirmation_refused',
  'skip_permissions_unconfirmed',
  'checkpoint_missing'
] as const

export type HostErrorCode = (typeof hostErrorCodes)[number]
