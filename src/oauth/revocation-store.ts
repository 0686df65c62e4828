// What token revocation (RFC 7009) needs from storage: the ids (jti) of revoked access tokens,
// each kept until the token would have expired anyway (then the purge deletes it: a token past
// its expiry is refused for that reason already). Every process of one database reads the same
// list; a revocation is a change for the authentication caches (store/auth-changes.ts), so a
// cached "not revoked" is dropped at once in every process.

export interface RevokedTokenStore {
  /** Records the token as revoked until `expiresAt`; revoking it again changes nothing. */
  revokeToken(jti: string, tenantId: string, expiresAt: Date): Promise<void>;
  /** Whether the token was revoked (always an object, so that "not revoked" can be cached). */
  findRevocation(jti: string): Promise<{ revoked: boolean }>;
  /** Deletes the revocations of tokens expired before `before`; how many. */
  deleteExpiredRevocations(before: Date): Promise<number>;
}
