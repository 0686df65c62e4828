// Encryption at rest for the few secrets the service must read back (the private signing keys;
// later TOTP seeds). AES-256-GCM with a key held outside the database: GATEHOUSE_ENCRYPTION_KEY,
// or else a key file created once in the data folder. Sealed values carry a version prefix so
// the scheme can change without a flag day.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export class SealedBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
  }

  open(sealed: string, context: string): string {
    const [version, iv, body, tag] = sealed.split('.');
    if (version !== 'v1' || !iv || body === undefined || !tag) throw new Error('unknown sealed-value format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(
        'a sealed value cannot be decrypted: GATEHOUSE_ENCRYPTION_KEY (or the key file in the data folder) is not the key it was sealed with',
      );
    }
  }
}

/** The configured key, or the data folder's key file (created with mode 0600 on first use). */
export function resolveEncryptionKey(configured: Buffer | undefined, dataDir: string): Buffer {
  if (configured) return configured;
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
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return resolveEncryptionKey(undefined, dataDir);
    throw err;
  }
  chmodSync(file, 0o600);
  return key;
}
