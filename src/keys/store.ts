// Token-signing keys. The private half is stored sealed (crypto/sealed-box.ts); the times say
// when each key signs and whether it was retired (keys/model.ts derives everything else).
export interface StoredSigningKey {
  kid: string;
  alg: string;
  publicJwk: Record<string, unknown>;
  privateJwkSealed: string;
  /** when it was made, and published */
  createdAt: Date;
  /** from when it signs */
  signsFrom: Date;
  /** until when it signs (its successor's signsFrom); null while no successor is planned */
  signsUntil: Date | null;
  retiredAt: Date | null;
}

/** The times of a key that a rotation or a retirement changes. */
export interface KeyTimesChange {
  signsFrom?: Date;
  signsUntil?: Date | null;
  retiredAt?: Date;
}

export interface KeyStore {
  /** every key, oldest first */
  listKeys(): Promise<StoredSigningKey[]>;
  insertKey(key: StoredSigningKey): Promise<void>;
  /** Replaces a key's sealed private half (re-sealed under another encryption key). */
  updateSealedKey(kid: string, privateJwkSealed: string): Promise<void>;
  /** Changes when a key signs, or retires it. */
  updateKeyTimes(kid: string, change: KeyTimesChange): Promise<void>;
  /** Serializes key creation, rotation, retirement and re-sealing across processes until the transaction ends. */
  lockKeys(): Promise<void>;
}
