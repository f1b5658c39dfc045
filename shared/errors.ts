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
 */
export const hostErrorCodes = ['unknown_method', 'invalid_params', 'invalid_request', 'forbidden', 'auth_required'] as const

export type HostErrorCode = (typeof hostErrorCodes)[number]
