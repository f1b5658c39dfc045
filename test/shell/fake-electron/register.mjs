// `node --import <this file> out/main/index.js`: 'electron' resolves to the stand-in beside this file (electron.mjs).
import { register } from 'node:module'

register('./hooks.mjs', import.meta.url)
