// @ts-check
import importX from 'eslint-plugin-import-x'
import vue from 'eslint-plugin-vue'
import tseslint from 'typescript-eslint'
import vueParser from 'vue-eslint-parser'

/**
 * Lint with type information (floating promises, non-null assertions, unsafe
 * casts), import cycles, and the layering written down as rules:
 * the renderer never reaches the Host, Electron or Node (its components reach
 * the Host only through the stores); shared/ has no
 * runtime of its own; the Host never imports Electron; nothing imports tests.
 */

/**
 * Type information from TypeScript's project service (the editor's): each file is found in tsconfig.json's references
 * (node or web), and it took 12-17 % less CPU than a list of `project`s (p61-suite in docs/BENCHMARKS.md, "The test
 * suite's time"). A .vue file still makes a new program each (its script is not what the program read from disk).
 */
const typed = {
  parserOptions: {
    projectService: true,
    tsconfigRootDir: import.meta.dirname,
    extraFileExtensions: ['.vue']
  }
}

/** What no source file may import (test code is never part of the app). */
const noTests = { group: ['**/test/**', '../test/*', '../../test/*'], message: 'The app never imports test code.' }

/** What nothing in the renderer may import: it runs in a browser page and reaches the Host only through its contract. */
const rendererImports = [
  {
    group: ['**/electron/**', '../electron/*', 'electron', 'electron/*'],
    message: 'The renderer reaches the Host only through the contract client (renderer/src/host/client.ts).'
  },
  { group: ['node:*'], message: 'The renderer runs in a browser: no Node modules.' },
  noTests
]

export default tseslint.config(
  { ignores: ['out/**', 'node_modules/**', 'test-results/**', 'dist/**', 'bench/.peers/**', '**/*.js', '**/*.mjs'] },
  {
    files: ['**/*.ts', '**/*.vue'],
    extends: [tseslint.configs.base],
    plugins: { 'import-x': importX },
    languageOptions: { parser: tseslint.parser, ...typed },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.vue', '.js'] })],
      // Without these, import-x reads only .js files when it follows imports, and finds no cycle among .ts files.
      // (.vue files are linted, but cycles are followed through .ts modules: stores, the router, helpers.)
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] }
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/no-non-null-assertion': 'error',
      // Casts that change what a value is (not just widen it) must be spelled out, never `{...} as T`.
      '@typescript-eslint/consistent-type-assertions': ['error', { assertionStyle: 'as', objectLiteralTypeAssertions: 'never' }],
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error'
    }
  },
  {
    files: ['**/*.vue'],
    extends: [...vue.configs['flat/essential']],
    languageOptions: { parser: vueParser, parserOptions: { parser: tseslint.parser, ...typed.parserOptions } },
    rules: { 'vue/multi-word-component-names': 'off' }
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.vue'],
    rules: { 'no-restricted-imports': ['error', { patterns: rendererImports }] }
  },
  {
    // Views reach the Host through the stores, which keep what it answers and show its refusals one way;
    // its error helpers (messageOf, HostRequestError) are theirs to use.
    files: ['renderer/src/components/**/*.ts', 'renderer/src/components/**/*.vue'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...rendererImports,
            {
              group: ['**/host/client'],
              importNames: ['host', 'installHost', 'HostClient'],
              message: 'A component reaches the Host through a store (renderer/src/stores/), never the contract client itself.'
            },
            {
              group: ['**/host/transport', '**/host/early-link', '**/host/wire-reader'],
              message: 'A component reaches the Host through a store (renderer/src/stores/), never the link to it.'
            }
          ]
        }
      ]
    }
  },
  {
    // The event router sits above the stores (the window wires it): a store importing it would make a circle.
    files: ['renderer/src/stores/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...rendererImports,
            {
              group: ['**/event-router', '../event-router'],
              message: 'No store imports the event router: it hands Host events to the stores, from above.'
            }
          ]
        }
      ]
    }
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'electron', 'electron/*', 'vue', 'pinia', '@vue/*'],
              message: 'shared/ has no runtime: it is imported by the Host and the renderer alike.'
            },
            {
              group: ['**/electron/**', '../electron/*', '**/renderer/**', '../renderer/*'],
              message: 'shared/ is the bottom layer: it imports neither the Host nor the renderer.'
            },
            noTests
          ]
        }
      ]
    }
  },
  {
    files: ['electron/host/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['electron', 'electron/*'], message: 'The Host runs without Electron (tests, `npm run serve`): only electron/*.ts imports it.' },
            {
              group: [
                '../*.ts',
                ...['ipc-bridge', 'main', 'preload', 'menu', 'window-state', 'secret-store'].flatMap((shell) => [`../${shell}`, `../../${shell}`]),
                '**/renderer/**'
              ],
              // From host.ts one folder up, from a room two: electron/*.ts is the shell.
              message: 'The Host never imports the Electron shell or the renderer.'
            },
            noTests
          ]
        }
      ]
    }
  },
  {
    files: ['electron/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/renderer/**', '../renderer/*'], message: 'The shell never imports the renderer.' }, noTests] }
      ]
    }
  },
  {
    // The Node.js version check runs before anything else, on whatever Node.js the user has: plain ES5, which every one parses.
    files: ['scripts/check-node.cjs'],
    languageOptions: { ecmaVersion: 5, sourceType: 'script' }
  },
  {
    // Tests assert with expect(): a value they have just checked is fine to assert non-null.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' }
  },
  {
    // Code that runs inside the page (page.evaluate) is typed without the DOM library here, and the scripted
    // agent builds protocol messages (some deliberately malformed) by hand.
    files: ['test/e2e/**/*.ts', 'test/agent/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/consistent-type-assertions': 'off'
    }
  }
)
