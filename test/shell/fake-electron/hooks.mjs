// The module loader hook of the stand-in: the bare name 'electron' is this folder's electron.mjs.
export async function resolve(specifier, context, next) {
  if (specifier === 'electron') return { url: new URL('./electron.mjs', import.meta.url).href, shortCircuit: true }
  return next(specifier, context)
}
