import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'

/**
 * Checks ACP messages against a JSON schema the SDK ships: `validator(type)`
 * for a `$defs` type, and `unknownKeys(value)` for keys the schema defines
 * nowhere. The schema leaves objects open for extensions, so a misspelt or
 * invented field would still validate; extensions belong in `_meta`.
 */
export function schemaChecker(
  defs: Record<string, unknown>,
  options: { extraKeys?: string[]; validateFormats?: boolean } = {}
): { validator: (type: string) => ValidateFunction; unknownKeys: (value: unknown) => string[] } {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: options.validateFormats ?? true })
  ajv.addSchema({ $id: 'acp', $defs: defs })
  const cache = new Map<string, ValidateFunction>()
  function validator(type: string): ValidateFunction {
    let validate = cache.get(type)
    if (!validate) {
      validate = ajv.getSchema(`acp#/$defs/${type}`)
      if (!validate) throw new Error(`The schema has no type ${type}`)
      cache.set(type, validate)
    }
    return validate
  }

  const knownKeys = new Set<string>(options.extraKeys ?? [])
  ;(function collect(node: unknown): void {
    if (Array.isArray(node)) return node.forEach(collect)
    if (typeof node !== 'object' || node === null) return
    const object = node as Record<string, unknown>
    if (object.properties && typeof object.properties === 'object') Object.keys(object.properties).forEach((k) => knownKeys.add(k))
    Object.values(object).forEach(collect)
  })(defs)
  function unknownKeys(value: unknown, path = ''): string[] {
    if (Array.isArray(value)) return value.flatMap((v, i) => unknownKeys(v, `${path}[${i}]`))
    if (typeof value !== 'object' || value === null) return []
    return Object.entries(value).flatMap(([key, v]) =>
      key === '_meta' ? [] : knownKeys.has(key) ? unknownKeys(v, `${path}.${key}`) : [`${path}.${key}`]
    )
  }
  return { validator, unknownKeys: (value) => unknownKeys(value) }
}
