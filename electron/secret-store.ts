import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { safeStorage } from 'electron'
import type { SecretStore } from './host/storage/secrets'

/**
 * Secrets encrypted with the OS keychain through Electron's safeStorage, kept
 * as base64 ciphertext in secrets.json under the data folder. Nothing readable
 * is ever written. Where the OS offers no encryption, secrets stay in memory
 * for the session only (and say so), rather than landing in plain text.
 */
export class SafeStorageSecretStore implements SecretStore {
  readonly persistent = safeStorage.isEncryptionAvailable()
  private cache: Map<string, string> | null = null
  private readonly file: string

  constructor(dataDir: string) {
    this.file = join(dataDir, 'secrets.json')
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.load()).get(key)
  }

  async set(key: string, value: string): Promise<void> {
    ;(await this.load()).set(key, value)
    await this.save()
  }

  async delete(key: string): Promise<void> {
    ;(await this.load()).delete(key)
    await this.save()
  }

  private async load(): Promise<Map<string, string>> {
    if (this.cache) return this.cache
    this.cache = new Map()
    if (!this.persistent) return this.cache
    try {
      const stored = JSON.parse(await fs.readFile(this.file, 'utf8')) as Record<string, string>
      for (const [key, cipher] of Object.entries(stored)) {
        this.cache.set(key, safeStorage.decryptString(Buffer.from(cipher, 'base64')))
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`Could not read the secret store ${this.file}: ${(error as Error).message}`)
    }
    return this.cache
  }

  private async save(): Promise<void> {
    if (!this.persistent || !this.cache) return
    const stored = Object.fromEntries([...this.cache].map(([key, value]) => [key, safeStorage.encryptString(value).toString('base64')]))
    const temp = `${this.file}.tmp`
    await fs.writeFile(temp, JSON.stringify(stored), { mode: 0o600 })
    await fs.rename(temp, this.file)
  }
}
