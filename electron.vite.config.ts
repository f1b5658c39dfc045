import { resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import vue from '@vitejs/plugin-vue'
import type { Plugin } from 'vite'

/**
 * The renderer's CSP is strict (no inline script or style, no eval). Vite's dev
 * server injects styles and an HMR client, so only `npm run dev` relaxes it.
 */
function relaxCspForDevServer(): Plugin {
  return {
    name: 'switchboard:dev-csp',
    apply: 'serve',
    transformIndexHtml(html) {
      return html
        .replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
        .replace("connect-src 'self'", "connect-src 'self' ws://localhost:* http://localhost:*")
    }
  }
}

export default defineConfig({
  main: {
    build: {
      rolldownOptions: {
        input: {
          index: resolve('electron/main.ts'),
          serve: resolve('electron/host/serve.ts')
        }
      }
    }
  },
  preload: {
    build: {
      rolldownOptions: {
        input: { index: resolve('electron/preload.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' }
      }
    }
  },
  renderer: {
    root: resolve('renderer'),
    plugins: [vue(), relaxCspForDevServer()],
    // Every component uses the Composition API (<script setup>): Vue's Options API support is left out of the bundle.
    define: { __VUE_OPTIONS_API__: 'false' },
    build: {
      outDir: resolve('out/renderer'),
      // The window's scripts are minified (electron-vite leaves every bundle readable by default): the first script is half the size.
      // SWITCHBOARD_READABLE_BUILD=1 leaves them readable, for a CPU profile that names functions (bench/profile.ts).
      minify: process.env.SWITCHBOARD_READABLE_BUILD !== '1',
      rolldownOptions: {
        input: resolve('renderer/index.html'),
        // Building a zod schema has no effect but the schema: one the window never uses (shared/ defines many for the Host) is left out.
        treeshake: { manualPureFunctions: ['z'] }
      }
    }
  }
})
