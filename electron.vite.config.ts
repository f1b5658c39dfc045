import { relative, resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import vue from '@vitejs/plugin-vue'
import type { Plugin } from 'vite'
import type { CodeSplittingGroup, OutputChunk } from 'rolldown'

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

/**
 * The window's first script (main.ts) opens the link to the Host and then imports the window itself
 * (open-window.ts) dynamically, so that the first load is asked for while the window's code arrives. That
 * code is needed at once all the same:
 * - it is one chunk: every module open-window.ts imports statically, less main.ts's own (the chunking would
 *   otherwise split off each module the lazy parts share with it, a dozen small files fetched in turn);
 * - `index.html` names that chunk as a `modulepreload` and its styles as a stylesheet, fetched beside the
 *   first script rather than after it.
 */
function windowChunk(): { plugin: Plugin; group: CodeSplittingGroup } {
  const windowModules = new Set<string>()
  const isModule = (id: string, file: string): boolean => id.replace(/\\/g, '/').endsWith(`/renderer/src/${file}`)
  const plugin: Plugin = {
    name: 'switchboard:window-chunk',
    apply: 'build',
    buildEnd() {
      const ids = [...this.getModuleIds()]
      const closure = (file: string): Set<string> => {
        const start = ids.find((id) => isModule(id, file))
        if (!start) throw new Error(`window-chunk: renderer/src/${file} is not in the build`)
        const seen = new Set<string>()
        const visit = (id: string): void => {
          if (seen.has(id)) return
          seen.add(id)
          for (const imported of this.getModuleInfo(id)?.importedIds ?? []) visit(imported)
        }
        visit(start)
        return seen
      }
      const first = closure('main.ts')
      windowModules.clear()
      for (const id of closure('open-window.ts')) if (!first.has(id)) windowModules.add(id)
    },
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const chunk = Object.values(ctx.bundle ?? {}).find(
          (item): item is OutputChunk => item.type === 'chunk' && item.moduleIds.some((id) => isModule(id, 'open-window.ts'))
        )
        if (!chunk) throw new Error('window-chunk: the window chunk (renderer/src/open-window.ts) is not in the build')
        const scripts = [chunk.fileName, ...chunk.imports].filter((file) => !html.includes(`/${file}"`))
        const styles = [...(chunk.viteMetadata?.importedCss ?? [])].filter((file) => !html.includes(`/${file}"`))
        const links = [
          ...scripts.map((file) => `<link rel="modulepreload" crossorigin href="./${file}">`),
          ...styles.map((file) => `<link rel="stylesheet" crossorigin href="./${file}">`)
        ]
        return html.replace(/\n?\s*<\/head>/, links.map((link) => `\n    ${link}`).join('') + '\n  </head>')
      }
    }
  }
  return { plugin, group: { name: 'window', test: (id) => windowModules.has(id), includeDependenciesRecursively: false } }
}

const window = windowChunk()

/**
 * Vue's plugin, its components' scope ids (the `data-v-…` of scoped styles) made from their path in the project
 * and their source: the same in the window's build (its root is renderer/) as in the main build, which compiles
 * the window's first screen for the Host (renderer/src/first-screen.ts), so the HTML the Host draws takes the
 * window's styles.
 */
function vueWithProjectIds(root: string): ReturnType<typeof vue> {
  return vue({
    features: {
      componentIdGenerator: (path, source, production, hash) =>
        hash(relative(resolve('.'), resolve(root, path)).replace(/\\/g, '/') + (production ? source : ''))
    }
  })
}

export default defineConfig({
  main: {
    // The window's first screen, drawn by the Host before the window's code runs (renderer/src/first-screen.ts):
    // the window's own components, compiled for the server renderer.
    plugins: [vueWithProjectIds('.')],
    resolve: {
      // Vue's builds for bundlers: the one for Node carries the template compiler, which the compiled components never use.
      alias: [
        { find: /^vue$/, replacement: 'vue/dist/vue.runtime.esm-bundler.js' },
        { find: /^vue\/server-renderer$/, replacement: '@vue/server-renderer/dist/server-renderer.esm-bundler.js' }
      ]
    },
    // Vue's production build: Node picks Vue's development build unless NODE_ENV says otherwise, which the Host's
    // process does not (neither the desktop app nor `serve` sets it); its checks and warnings made each drawing
    // four times as slow. Nothing else in the main build reads NODE_ENV.
    define: {
      __VUE_OPTIONS_API__: 'false',
      __VUE_PROD_DEVTOOLS__: 'false',
      __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
      'process.env.NODE_ENV': JSON.stringify('production')
    },
    build: {
      // Vue is bundled, in its production build (above). Pinia too: its Node build imports @vue/devtools-api, a
      // peer dependency the packaged app does not carry.
      externalizeDeps: { exclude: ['pinia', 'vue', '@tanstack/vue-virtual'] },
      rolldownOptions: {
        input: {
          index: resolve('electron/main.ts'),
          // The Host's own process in the desktop app (an Electron utilityProcess, supervised by main.ts).
          'host-process': resolve('electron/host-process.ts'),
          serve: resolve('electron/host/serve.ts'),
          // The `switchboard` command (bin/switchboard.mjs): headless runs, listing and search.
          cli: resolve('electron/host/cli/main.ts'),
          'first-screen': resolve('renderer/src/first-screen.ts')
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
    plugins: [vueWithProjectIds('renderer'), relaxCspForDevServer(), window.plugin],
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
        treeshake: { manualPureFunctions: ['z'] },
        output: { codeSplitting: { groups: [window.group] } }
      }
    }
  }
})
