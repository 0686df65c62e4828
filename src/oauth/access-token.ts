// Access tokens: JWTs (RFC 9068 `at+jwt`) signed with the key ring's ES256 key. A token names
// its principal and, for a client, the secret it was obtained with, so that revoking either
// ends the token. Verification pins the algorithm, issuer, audience, type and region, looks keys
// up only in our own key ring (never jku/x5u/jwk headers), and refuses any claim of a form we do
// not issue and any lifetime longer than we give, before the principal is looked up. Every
// refusal says in words what is wrong with the token (never a library's error code), without
// quoting anything the token holds.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../clock.js';
import { parseScopeClaim, scopeText } from '../access/scope.js';
import type { RoleName } from '../access/roles.js';
import { isCanonicalUuid, TENANT_ID_PATTERN } from '../ids.js';
import { possibleClientId } from '../credentials/model.js';
import { SIGNING_ALG, type KeyRing } from '../keys/key-ring.js';
import { REGIONS } from '../config/settings.js';

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

/**
 * A refused token. `message` says what is wrong, as a clause ("the token has expired");
 * `remedy`, when set, says what to do instead of the transport's usual advice (obtain a new token
 * from the token endpoint).
 */
export class InvalidToken extends Error {
  constructor(
    reason: string,
    readonly remedy?: string,
  ) {
    super(reason);
    this.name = 'InvalidToken';
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const PART_NAMES = ['header', 'payload', 'signature'] as const;
const WRONG_ALG = `the token is not signed with ${SIGNING_ALG}, the only algorithm of the tokens this server issues`;

/** A token part decoded as a JSON object, or undefined. */
function jsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The token's form, checked before jose: a JWS in compact form, three base64url parts, a header
 * and a payload that are JSON objects, ES256, a key id. Each problem is named in words.
 */
function checkForm(token: string): void {
  const parts = token.split('.');
  if (parts.length !== 3) {
    throw new InvalidToken(
      `the token is not a JWT: an access token is three base64url parts joined by dots (header.payload.signature), and this one has ${parts.length}`,
    );
  }
  for (const [i, part] of parts.entries()) {
    if (part === '') throw new InvalidToken(`the token's ${PART_NAMES[i]} (part ${i + 1} of 3) is empty`);
    if (!BASE64URL.test(part) || part.length % 4 === 1) throw new InvalidToken(`the token's ${PART_NAMES[i]} (part ${i + 1} of 3) is not base64url`);
  }
  const header = jsonObject(parts[0]!);
  if (!header) throw new InvalidToken("the token's header is not a JSON object");
  if (header.alg !== SIGNING_ALG) throw new InvalidToken(WRONG_ALG);
  if (typeof header.kid !== 'string' || header.kid === '') throw new InvalidToken("the token's header names no signing key (kid)");
  if (!jsonObject(parts[1]!)) throw new InvalidToken("the token's payload is not a JSON object");
}

/** What jose found wrong, in words. */
function joseReason(err: InstanceType<typeof joseErrors.JOSEError>): string {
  if (err instanceof joseErrors.JWTExpired) return 'the token has expired';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return "the token's signature does not verify: the token was altered, or it was not signed by this server";
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return WRONG_ALG;
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    // the claim names are those jose checks for us, never text from the token
    if (err.reason === 'missing') return `the token has no ${err.claim} claim`;
    switch (err.claim) {
      case 'typ':
        return "the token is not an access token: its header's typ is not at+jwt";
      case 'iss':
        return 'the token was issued by another server (iss)';
      case 'aud':
        return 'the token is meant for another audience (aud)';
      case 'nbf':
        return 'the token is not valid yet (nbf)';
      default:
        return `the token's ${err.claim} claim is not valid`;
    }
  }
  return 'the token is not a well-formed signed JWT';
}

/** Clock difference tolerated between the issuing and the verifying process, in seconds. */
export const CLOCK_SKEW_SECONDS = 5;

/**
 * What jose does not check, before anything reaches the database: every claim has the form we
 * issue (a token signed with our key but holding other values must end as invalid_token, never
 * as a database error), and the token's lifetime is one we could have given it.
 */
function checkClaims(payload: JWTPayload, now: number, settings: TokenSettings): void {
  if (payload.region !== settings.region) throw new InvalidToken(`the token is for another region than this server's (${settings.region})`);
  if (payload.pty !== 'client' && payload.pty !== 'user') throw new InvalidToken('the token has no principal type (pty)');
  // jose has checked that iat and exp are numbers and that exp has not passed
  const iat = payload.iat!;
  const exp = payload.exp!;
  if (iat > now + CLOCK_SKEW_SECONDS) throw new InvalidToken('the token was issued in the future (iat)');
  if (exp - iat > settings.ttlSeconds + CLOCK_SKEW_SECONDS) throw new InvalidToken("the token's lifetime is longer than this server issues");
  if (!isCanonicalUuid(payload.sub)) throw new InvalidToken("the token's subject (sub) is not a principal id");
  if (!isCanonicalUuid(payload.jti)) throw new InvalidToken("the token's id (jti) is not a UUID");
  if (typeof payload.tid !== 'string' || !TENANT_ID_PATTERN.test(payload.tid)) throw new InvalidToken('the token names no tenant (tid)');
  if (payload.secret_id !== undefined && !isCanonicalUuid(payload.secret_id))
    throw new InvalidToken("the token's secret id (secret_id) is not a UUID");
  if (payload.client_id !== undefined && (typeof payload.client_id !== 'string' || !possibleClientId(payload.client_id))) {
    throw new InvalidToken("the token's client id (client_id) is malformed");
  }
  if (payload.scope !== undefined && parseScopeClaim(payload.scope) === undefined) throw new InvalidToken("the token's scope is malformed");
  if (payload.pty === 'client' && (payload.secret_id === undefined || payload.client_id === undefined))
    throw new InvalidToken('the client token carries no client_id or secret_id');
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
   * once its key has left the key ring (retired, or out of the JWKS). Whether its principal may still use it is checked on
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
    const { kid, signer } = await this.keys.signingKey();
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
    if (token.length > 8192) throw new InvalidToken('the token is longer than 8192 characters: not one this server issues');
    // a key retired (here or by another process) is dropped before any token is trusted
    await this.keys.refresh();
    const known = this.verified.get(token);
    if (known) {
      // what jose would check again: expiry (with the same tolerance) and the key
      if (known.claims.exp + CLOCK_SKEW_SECONDS <= this.clock.now().getTime() / 1000) {
        this.verified.delete(token);
        throw new InvalidToken('the token has expired');
      }
      if (this.keys.holds(known.kid)) return known.claims;
      this.verified.delete(token);
    }
    checkForm(token);
    // another region's token fails its signature here (each region is its own deployment, with
    // its own keys): say which region it belongs to instead, as only a known region's name
    const claimed = jsonObject(token.split('.')[1]!)?.region;
    if (claimed !== this.settings.region && typeof claimed === 'string' && (REGIONS as readonly string[]).includes(claimed)) {
      throw new InvalidToken(
        `the token was issued in region ${claimed} and this server is region ${this.settings.region}: a token works only in the region whose deployment issued it`,
      );
    }
    let payload: JWTPayload;
    let kid = '';
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header) => {
          const unknown = 'the token was signed with a key this server does not have (kid)';
          if (typeof header.kid !== 'string' || header.kid.length > 128) throw new InvalidToken(unknown);
          const key = await this.keys.verificationKey(header.kid);
          if (!key && this.keys.cannotLoad(header.kid)) {
            throw new InvalidToken('the token was signed with a key (kid) this server cannot load: an operator has been told');
          }
          if (!key) throw new InvalidToken(unknown);
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
      if (err instanceof joseErrors.JOSEError) throw new InvalidToken(joseReason(err));
      throw err;
    }
    checkClaims(payload, this.clock.now().getTime() / 1000, this.settings);
    const claims = payload as AccessTokenClaims;
    this.verified.set(token, { kid, claims: Object.freeze(claims) });
    return claims;
  }
}
