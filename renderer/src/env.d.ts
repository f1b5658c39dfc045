/// <reference types="vite/client" />

declare module '*.vue' {
  import type { DefineComponent } from 'vue'
  const component: DefineComponent<object, object, unknown>
  export default component
}

interface Window {
  /** Present inside the Electron app: the transport the preload exposes. */
  switchboard?: import('../../shared/contract').BridgeTransport
}

// highlight.js's package exports give its `lib/*` entries no types; they are the core and language functions.
declare module 'highlight.js/lib/core' {
  import hljs from 'highlight.js'
  export default hljs
}
declare module 'highlight.js/lib/languages/*' {
  import type { LanguageFn } from 'highlight.js'
  const language: LanguageFn
  export default language
}
