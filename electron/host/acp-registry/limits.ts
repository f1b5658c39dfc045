/**
 * How much the registry may make Switchboard fetch and write. Each is checked
 * while the bytes arrive (a download, the feed, an icon) or are unpacked, so a
 * server that sends for ever or an archive that inflates without end is
 * stopped at the limit, not after it filled the disk or the memory.
 */
export interface RegistryLimits {
  /** An agent's archive as downloaded. */
  downloadBytes: number
  /** Everything an archive unpacks to, together. */
  unpackedBytes: number
  /** How many times its compressed size an archive (tar) or a zip entry may unpack to, once past `ratioFloorBytes`. */
  ratio: number
  /** Below this many unpacked bytes no ratio is too high (a small file of padding compresses well). */
  ratioFloorBytes: number
  /** The feed's JSON. */
  feedBytes: number
  /** One agent's icon (SVG). */
  iconBytes: number
}

export const REGISTRY_LIMITS: RegistryLimits = {
  // The largest agent in the registry today ships about 100 MB.
  downloadBytes: 1024 * 1024 * 1024,
  unpackedBytes: 4 * 1024 * 1024 * 1024,
  // Executables compress 2 to 5 times; a zip bomb a thousand times and more.
  ratio: 100,
  ratioFloorBytes: 16 * 1024 * 1024,
  feedBytes: 8 * 1024 * 1024,
  iconBytes: 64 * 1024
}

export function registryLimits(given?: Partial<RegistryLimits>): RegistryLimits {
  return { ...REGISTRY_LIMITS, ...given }
}

/** A sentence for a number of bytes: "1.5 MB". */
export function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  const units = ['KB', 'MB', 'GB', 'TB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value >= 10 ? Math.round(value) : Math.round(value * 10) / 10} ${units[unit]}`
}
