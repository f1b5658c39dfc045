/// <reference types="vite/client" />

declare module '*.vue' {
  import type { DefineComponent } from 'vue'
  const component: DefineComponent<object, object, unknown>
  export default component
}

interface Window {
  /** Present inside the Electron app: the transport the preload exposes. */
  switchboard?: import('../../shared/contract').HostTransport
}
