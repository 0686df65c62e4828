// Encryption at rest for the few secrets the service must read back (the private signing keys;
// later TOTP seeds). AES-256-GCM with keys held outside the database: GATEHOUSE_ENCRYPTION_KEY
// (a list, so the key can be rotated: the first seals, every one unseals), or else a key file
// created once in the data folder. Sealed values carry a version prefix so the scheme can change
// without a flag day:
//   v1.<iv>.<ciphertext>.<tag>            the first format: which key sealed it is not recorded
//   v2.<key id>.<iv>.<ciphertext>.<tag>   the key id names the key (see keyId), so unsealing
//                                         needs no trial and an error can say which key is missing
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The first 8 hex digits of the key's SHA-256: names a key in sealed values and messages without revealing it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

interface SealingKey {
  id: string;
  key: Buffer;
}

export class SealedBox {
  private readonly keys: SealingKey[];

  /** `keys`: the first seals; all of them unseal. */
  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new Error('no encryption key');
    this.keys = keys.map((key) => {
      if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
      return { id: keyId(key), key };
    });
    if (new Set(this.keys.map((k) => k.id)).size !== this.keys.length) throw new Error('two encryption keys share a key id');
  }

  /** The id of the key that seals. */
  get sealingKeyId(): string {
    return this.keys[0]!.id;
  }

  seal(plaintext: string, context: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v2.${id}.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
  }

  open(sealed: string, context: string): string {
    return this.unseal(sealed, context).plaintext;
  }

  /** Whether the value is sealed under a key other than the first (it opens, or this throws). */
  needsReseal(sealed: string, context: string): boolean {
    return this.unseal(sealed, context).keyIndex !== 0;
  }

  /** The value sealed anew under the first key, or undefined when it already is sealed under it. */
  reseal(sealed: string, context: string): string | undefined {
    const { plaintext, keyIndex } = this.unseal(sealed, context);
    return keyIndex === 0 ? undefined : this.seal(plaintext, context);
  }

  private unseal(sealed: string, context: string): { plaintext: string; keyIndex: number } {
    const parts = sealed.split('.');
    if (parts[0] === 'v2' && parts.length === 5) {
      const [, id, iv, body, tag] = parts as [string, string, string, string, string];
      const keyIndex = this.keys.findIndex((k) => k.id === id);
      if (keyIndex < 0) {
        throw new Error(
          `a sealed value was sealed under encryption key id ${id}, which is not in GATEHOUSE_ENCRYPTION_KEY ` +
            `(its keys have ids ${this.keys.map((k) => k.id).join(', ')}): add that key to the list`,
        );
      }
      const plaintext = decrypt(this.keys[keyIndex]!.key, iv, body, tag, context);
      if (plaintext === undefined) throw new Error(`a sealed value does not decrypt under encryption key id ${id}: it is corrupt`);
      return { plaintext, keyIndex };
    }
    if (parts[0] === 'v1' && parts.length === 4) {
      const [, iv, body, tag] = parts as [string, string, string, string];
      // v1 does not say which key sealed it: try each
      for (const [keyIndex, { key }] of this.keys.entries()) {
        const plaintext = decrypt(key, iv, body, tag, context);
        if (plaintext !== undefined) return { plaintext, keyIndex };
      }
      throw new Error(
        'a sealed value cannot be decrypted: it was sealed with none of the keys in GATEHOUSE_ENCRYPTION_KEY ' +
          `(ids ${this.keys.map((k) => k.id).join(', ')}) or the key file in the data folder`,
      );
    }
    throw new Error('unknown sealed-value format');
  }
}

function decrypt(key: Buffer, iv: string, body: string, tag: string, context: string): string | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The configured keys, or else (embedded database only) the data folder's key file, created with
 * mode 0600 on first use. On PostgreSQL a key file would live on one machine's disk while the
 * values it seals are shared with every process, so a key must be configured.
 */
export function resolveEncryptionKeys(configured: Buffer[], dataDir: string, engine: 'pglite' | 'postgres'): Buffer[] {
  if (configured.length > 0) return configured;
  if (engine === 'postgres') throw new Error('GATEHOUSE_ENCRYPTION_KEY is required with DATABASE_URL');
  return [keyFile(dataDir)];
}

function keyFile(dataDir: string): Buffer {
  const dir = resolve(dataDir);
  const file = join(dir, 'encryption.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    return key;
  }
  mkdirSync(dir, { recursive: true });
  const key = randomBytes(32);
  try {
    writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // another process created it first: use theirs
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return keyFile(dataDir);
    throw err;
  }
  chmodSync(file, 0o600);
  return key;
}
