// Token-signing keys. The private half is stored sealed (crypto/sealed-box.ts).
export interface StoredSigningKey {
  kid: string;
  alg: string;
  publicJwk: Record<string, unknown>;
  privateJwkSealed: string;
  createdAt: Date;
  retiredAt: Date | null;
}

export interface KeyStore {
  listKeys(): Promise<StoredSigningKey[]>;
  insertKey(key: StoredSigningKey): Promise<void>;
  /** Replaces a key's sealed private half (re-sealed under another encryption key). */
  updateSealedKey(kid: string, privateJwkSealed: string): Promise<void>;
  /** Serializes key creation and re-sealing across processes until the transaction ends. */
  lockKeys(): Promise<void>;
}
