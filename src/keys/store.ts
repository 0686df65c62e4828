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
  /** Serializes key creation across processes until the transaction ends. */
  lockKeys(): Promise<void>;
}
