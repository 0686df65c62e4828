// Access tokens: JWTs (RFC 9068 `at+jwt`) signed with the key ring's ES256 key. A token names
// its principal and, for a client, the secret it was obtained with, so that revoking either
// ends the token. Verification pins the algorithm, issuer, audience, type and region, looks keys
// up only in our own key ring (never jku/x5u/jwk headers), and refuses any claim of a form we do
// not issue and any lifetime longer than we give, before the principal is looked up.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../clock.js';
import { parseScopeClaim, scopeText } from '../access/scope.js';
import type { RoleName } from '../access/roles.js';
import { isCanonicalUuid, TENANT_ID_PATTERN } from '../ids.js';
import { possibleClientId } from '../credentials/model.js';
import { SIGNING_ALG, type KeyRing } from '../keys/key-ring.js';

export interface TokenSubject {
  kind: 'client' | 'user';
  /** UUID of the client or user */
  id: string;
  tenantId: string;
  /** the public client_id, for client tokens */
  clientId?: string;
  secretId?: string;
  /** the roles the token is narrowed to; undefined: every role the principal holds at each request */
  scope?: readonly RoleName[];
}

export interface AccessTokenClaims extends JWTPayload {
  iss: string;
  sub: string;
  aud: string;
  tid: string;
  region: string;
  iat: number;
  exp: number;
  jti: string;
  /** 'client' or 'user': subjects of the two kinds can never be confused */
  pty: 'client' | 'user';
  client_id?: string;
  secret_id?: string;
  /** role names, space-separated (scopeText): present only when the token was narrowed to them */
  scope?: string;
}

export interface IssuedToken {
  token: string;
  expiresIn: number;
  expiresAt: Date;
  jti: string;
}

export class InvalidToken extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidToken';
  }
}

/** Clock difference tolerated between the issuing and the verifying process, in seconds. */
export const CLOCK_SKEW_SECONDS = 5;

/**
 * What jose does not check, before anything reaches the database: every claim has the form we
 * issue (a token signed with our key but holding other values must end as invalid_token, never
 * as a database error), and the token's lifetime is one we could have given it.
 */
function checkClaims(payload: JWTPayload, now: number, settings: TokenSettings): void {
  if (payload.region !== settings.region) throw new InvalidToken('token is for another region');
  if (payload.pty !== 'client' && payload.pty !== 'user') throw new InvalidToken('token has no principal type');
  // jose has checked that iat and exp are numbers and that exp has not passed
  const iat = payload.iat!;
  const exp = payload.exp!;
  if (iat > now + CLOCK_SKEW_SECONDS) throw new InvalidToken('token issued in the future');
  if (exp - iat > settings.ttlSeconds + CLOCK_SKEW_SECONDS) throw new InvalidToken('token lifetime is longer than this server issues');
  if (!isCanonicalUuid(payload.sub)) throw new InvalidToken('token subject is not a principal id');
  if (!isCanonicalUuid(payload.jti)) throw new InvalidToken('token id is not a UUID');
  if (typeof payload.tid !== 'string' || !TENANT_ID_PATTERN.test(payload.tid)) throw new InvalidToken('token has no tenant');
  if (payload.secret_id !== undefined && !isCanonicalUuid(payload.secret_id)) throw new InvalidToken('token secret id is not a UUID');
  if (payload.client_id !== undefined && (typeof payload.client_id !== 'string' || !possibleClientId(payload.client_id))) {
    throw new InvalidToken('token client id is malformed');
  }
  if (payload.scope !== undefined && parseScopeClaim(payload.scope) === undefined) throw new InvalidToken('token scope is malformed');
  if (payload.pty === 'client' && (payload.secret_id === undefined || payload.client_id === undefined))
    throw new InvalidToken('client token without secret');
}

export interface TokenSettings {
  issuer: string;
  audience: string;
  region: string;
  ttlSeconds: number;
}

/** tokens whose verification is remembered: more than the callers that are busy at once */
const VERIFIED_TOKENS = 10_000;

export class AccessTokens {
  /**
   * Tokens that verified, with their claims: the signature check is the costly part, and its
   * answer never changes for one token. A remembered token is still refused once it expires or
   * once its key has left the key ring. Whether its principal may still use it is checked on
   * every request (access/authenticate.ts), so revocation never waits for this cache.
   */
  private readonly verified = new LRUCache<string, { kid: string; claims: AccessTokenClaims }>({ max: VERIFIED_TOKENS });

  constructor(
    private readonly keys: KeyRing,
    private readonly settings: TokenSettings,
    private readonly clock: Clock,
  ) {}

  async issue(subject: TokenSubject): Promise<IssuedToken> {
    // an empty scope claim would mean "no role": the grant never narrows to nothing
    if (subject.scope !== undefined && subject.scope.length === 0) throw new Error('a scoped token needs at least one role');
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const exp = iat + this.settings.ttlSeconds;
    const jti = randomUUID();
    const { kid, signer } = this.keys.signingKey();
    const claims: AccessTokenClaims = {
      tid: subject.tenantId,
      region: this.settings.region,
      pty: subject.kind,
      ...(subject.clientId ? { client_id: subject.clientId } : {}),
      ...(subject.secretId ? { secret_id: subject.secretId } : {}),
      ...(subject.scope !== undefined ? { scope: scopeText(subject.scope) } : {}),
      iss: this.settings.issuer,
      sub: subject.id,
      aud: this.settings.audience,
      iat,
      exp,
      jti,
    };
    const token = await signer.sign({ alg: SIGNING_ALG, kid, typ: 'at+jwt' }, claims);
    return { token, expiresIn: this.settings.ttlSeconds, expiresAt: new Date(exp * 1000), jti };
  }

  async verify(token: string): Promise<AccessTokenClaims> {
    if (token.length > 8192) throw new InvalidToken('token too long');
    const known = this.verified.get(token);
    if (known) {
      // what jose would check again: expiry (with the same tolerance) and the key
      if (known.claims.exp + CLOCK_SKEW_SECONDS <= this.clock.now().getTime() / 1000) {
        this.verified.delete(token);
        throw new InvalidToken('token expired');
      }
      if (this.keys.holds(known.kid)) return known.claims;
      this.verified.delete(token);
    }
    let payload: JWTPayload;
    let kid = '';
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header) => {
          if (typeof header.kid !== 'string' || header.kid.length > 128) throw new InvalidToken('unknown key');
          const key = await this.keys.verificationKey(header.kid);
          if (!key) throw new InvalidToken('unknown key');
          kid = header.kid;
          return key;
        },
        {
          algorithms: [SIGNING_ALG],
          issuer: this.settings.issuer,
          audience: this.settings.audience,
          typ: 'at+jwt',
          currentDate: this.clock.now(),
          clockTolerance: CLOCK_SKEW_SECONDS,
          requiredClaims: ['iss', 'sub', 'aud', 'iat', 'exp', 'jti'],
        },
      ));
    } catch (err) {
      if (err instanceof InvalidToken) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new InvalidToken('token expired');
      if (err instanceof joseErrors.JOSEError) throw new InvalidToken(`token rejected (${err.code})`);
      throw err;
    }
    checkClaims(payload, this.clock.now().getTime() / 1000, this.settings);
    const claims = payload as AccessTokenClaims;
    this.verified.set(token, { kid, claims: Object.freeze(claims) });
    return claims;
  }
}
