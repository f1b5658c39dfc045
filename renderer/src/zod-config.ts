import { config } from 'zod/mini'

/**
 * The window's CSP has no 'unsafe-eval'. Zod would probe for `new Function`
 * (to compile fast object parsers) the first time it checks a message; the
 * probe's failure is caught, but the browser still reports it as a CSP
 * violation. jitless skips the probe: messages are checked the plain way.
 * (zod/mini and zod's classic API share this configuration.)
 */
config({ jitless: true })
