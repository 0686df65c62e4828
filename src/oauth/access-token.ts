// Access tokens: JWTs (RFC 9068 `at+jwt`) signed with the key ring's ES256 key. A token names
// its principal and, for a client, the secret it was obtained with, so that revoking either
// ends the token. Verification pins the algorithm, issuer, audience, type and region and looks
// keys up only in our own key ring (never jku/x5u/jwk headers).
import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../clock.js';
import { SIGNING_ALG, type KeyRing } from '../keys/key-ring.js';

export interface TokenSubject {
  kind: 'client' | 'user';
  /** UUID of the client or user */
  id: string;
  tenantId: string;
  /** the public client_id, for client tokens */
  clientId?: string;
  secretId?: string;
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

export interface TokenSettings {
  issuer: string;
  audience: string;
  region: string;
  ttlSeconds: number;
}

export class AccessTokens {
  constructor(
    private readonly keys: KeyRing,
    private readonly settings: TokenSettings,
    private readonly clock: Clock,
  ) {}

  async issue(subject: TokenSubject): Promise<IssuedToken> {
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const exp = iat + this.settings.ttlSeconds;
    const jti = randomUUID();
    const { kid, key } = this.keys.signingKey();
    const claims: Omit<AccessTokenClaims, 'iss' | 'sub' | 'aud' | 'iat' | 'exp' | 'jti'> = {
      tid: subject.tenantId,
      region: this.settings.region,
      pty: subject.kind,
      ...(subject.clientId ? { client_id: subject.clientId } : {}),
      ...(subject.secretId ? { secret_id: subject.secretId } : {}),
    };
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'at+jwt' })
      .setIssuer(this.settings.issuer)
      .setSubject(subject.id)
      .setAudience(this.settings.audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(key);
    return { token, expiresIn: this.settings.ttlSeconds, expiresAt: new Date(exp * 1000), jti };
  }

  async verify(token: string): Promise<AccessTokenClaims> {
    if (token.length > 8192) throw new InvalidToken('token too long');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header) => {
          if (typeof header.kid !== 'string' || header.kid.length > 128) throw new InvalidToken('unknown key');
          const key = await this.keys.verificationKey(header.kid);
          if (!key) throw new InvalidToken('unknown key');
          return key;
        },
        {
          algorithms: [SIGNING_ALG],
          issuer: this.settings.issuer,
          audience: this.settings.audience,
          typ: 'at+jwt',
          currentDate: this.clock.now(),
          clockTolerance: 5,
          requiredClaims: ['iss', 'sub', 'aud', 'iat', 'exp', 'jti'],
        },
      ));
    } catch (err) {
      if (err instanceof InvalidToken) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new InvalidToken('token expired');
      if (err instanceof joseErrors.JOSEError) throw new InvalidToken(`token rejected (${err.code})`);
      throw err;
    }
    if (payload.region !== this.settings.region) throw new InvalidToken('token is for another region');
    if (payload.pty !== 'client' && payload.pty !== 'user') throw new InvalidToken('token has no principal type');
    if (typeof payload.tid !== 'string') throw new InvalidToken('token has no tenant');
    if (payload.pty === 'client' && typeof payload.secret_id !== 'string') throw new InvalidToken('client token without secret');
    return payload as AccessTokenClaims;
  }
}
