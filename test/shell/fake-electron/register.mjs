// `node --import <this file> out/main/index.js`: 'electron' resolves to the stand-in beside this file (electron.mjs),
// for import (the loader hook) and for require() (a CommonJS package such as electron-updater asks for it so).
import Module, { register } from 'node:module'

register('./hooks.mjs', import.meta.url)

const electron = await import('./electron.mjs')
const load = Module._load
Module._load = function (request, ...rest) {
  return request === 'electron' ? electron : load.call(this, request, ...rest)
}
