// Passkeys' WebAuthn rules (docs/users.md "Passkeys"), on @simplewebauthn/server: who the relying
// party is (from the deployment's base URL, never from a request's Host header), the options a
// browser is given, and the checks of what it answers. User verification is required everywhere:
// a passkey stands for something the person has and something they are or know.
//
// The signature counter is not left to the library: it is checked by the store's one conditional
// update (PasskeyStore.recordPasskeyUse), after the signature held, so that two requests racing
// with one response cannot both pass, and a counter that does not increase is known as such (a
// cloned authenticator, WebAuthn §6.1.1) rather than as any other failure.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { SessionState } from '../sessions/model.js';
import type { Passkey } from './store.js';

export type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON };

/** @simplewebauthn/server, imported at the first passkey operation: its import takes about 170 ms
 *  (a fifth of the server's start; docs/benchmarks.md), which every start would pay for nothing
 *  where nobody uses a passkey. */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
const simpleWebAuthn = () => {
  library ??= import('@simplewebauthn/server');
  return library;
};

/** how long the browser's prompt lasts */
export const PASSKEY_PROMPT_MS = 5 * 60_000;
/** how long a challenge holds in its session: a page shows one with at least PASSKEY_PROMPT_MS
 *  left, so a page rendered again within that reuses it (no write per page view) */
export const PASSKEY_CHALLENGE_TTL_MS = 2 * PASSKEY_PROMPT_MS;

/** A new challenge: 32 random bytes, base64url. */
export function newChallenge(): string {
  return randomBytes(32).toString('base64url');
}
/** the longest name a person gives a passkey */
export const PASSKEY_NAME_MAX = 64;

/** The relying party: the base URL's host name (its RP id) and origin, and the service's name. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

/** The deployment's relying party, or undefined when its base URL's host is an IP address
 *  (WebAuthn accepts only a domain as RP id: passkeys are then not offered). */
export function relyingParty(baseUrl: string, name: string): RelyingParty | undefined {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '' || isIP(host) !== 0) return undefined;
  return { id: host, origin: url.origin, name };
}

/** A challenge kept in the session until its answer (single use: taken out when answered). */
export type PasskeyChallenge = NonNullable<SessionState['passkeyChallenge']>;

/** Whether a challenge taken from the session may be answered now, for this purpose and account. */
export function challengeHolds(c: PasskeyChallenge | undefined, purpose: PasskeyChallenge['purpose'], now: Date, leftMs = 0): c is PasskeyChallenge {
  if (!c || c.purpose !== purpose || typeof c.challenge !== 'string') return false;
  const age = now.getTime() - Date.parse(c.issuedAt);
  return age >= 0 && age <= PASSKEY_CHALLENGE_TTL_MS - leftMs;
}

export async function registrationOptions(
  rp: RelyingParty,
  user: { id: string; email: string },
  existing: Passkey[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return (await simpleWebAuthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userID: new TextEncoder().encode(user.id),
    userDisplayName: user.email,
    timeout: PASSKEY_PROMPT_MS,
    attestationType: 'none',
    // the same authenticator is not registered twice
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    // discoverable, so that it can sign in without an address typed; verified, always
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
  });
}

/** The options of a sign-in step: `allowed` lists the passkeys of the account signing in (after
 *  its password); empty, the browser offers any passkey it has for this site. */
export async function authenticationOptions(rp: RelyingParty, allowed: Passkey[], challenge: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return (await simpleWebAuthn()).generateAuthenticationOptions({
    rpID: rp.id,
    // as bytes: a string would be taken as UTF-8 text and encoded again
    challenge: new Uint8Array(Buffer.from(challenge, 'base64url')),
    timeout: PASSKEY_PROMPT_MS,
    userVerification: 'required',
    allowCredentials: allowed.map((p) => ({ id: p.credentialId, transports: p.transports })),
  });
}

/** What the browser posted, read as a credential's JSON (never trusted further than its id). */
export interface PostedCredential {
  id: string;
  json: Record<string, unknown>;
}

/** The browser's answer as posted in the form (JSON, base64url fields), or undefined when it is not one. */
export function postedCredential(raw: string | undefined): PostedCredential | undefined {
  if (!raw || raw.length > 12_000) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const id = (json as Record<string, unknown>).id;
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,1400}$/.test(id)) return undefined;
  return { id, json: json as Record<string, unknown> };
}

/** Whether the answer's user handle, if it carries one, is the passkey owner's (WebAuthn §7.2
 *  step 6: the handle the credential was made with, this service's user id). */
export function userHandleMatches(posted: PostedCredential, userId: string): boolean {
  const handle = (posted.json.response as Record<string, unknown> | undefined)?.userHandle;
  if (handle === undefined || handle === null || handle === '') return true;
  return typeof handle === 'string' && Buffer.from(handle, 'base64url').toString('utf8') === userId;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; userVerification: boolean; reason: string };

/** Checks a registration's answer: this challenge, this origin and RP id, the user verified. */
export async function checkRegistration(
  rp: RelyingParty,
  challenge: string,
  posted: PostedCredential,
): Promise<Checked<{ credentialId: string; publicKey: Buffer; counter: number; transports: string[] }>> {
  try {
    const result = await (await simpleWebAuthn()).verifyRegistrationResponse({
      response: posted.json as never,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!result.verified) return { ok: false, userVerification: false, reason: 'registration not verified' };
    const c = result.registrationInfo.credential;
    return { ok: true, value: { credentialId: c.id, publicKey: Buffer.from(c.publicKey), counter: c.counter, transports: c.transports ?? [] } };
  } catch (err) {
    return failure(err);
  }
}

/** Checks a sign-in's answer against the stored passkey: this challenge, origin and RP id, the
 *  signature, the user verified. The counter is the caller's (see the header); the new one is returned. */
export async function checkAuthentication(
  rp: RelyingParty,
  challenge: string,
  posted: PostedCredential,
  passkey: Passkey,
): Promise<Checked<{ counter: number }>> {
  try {
    const result = await (await simpleWebAuthn()).verifyAuthenticationResponse({
      response: posted.json as never,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      // 0: the library's own counter check is off; the store's conditional update does it
      credential: { id: passkey.credentialId, publicKey: new Uint8Array(passkey.publicKey), counter: 0, transports: passkey.transports },
      requireUserVerification: true,
    });
    if (!result.verified) return { ok: false, userVerification: false, reason: 'signature not verified' };
    return { ok: true, value: { counter: result.authenticationInfo.newCounter } };
  } catch (err) {
    return failure(err);
  }
}

function failure(err: unknown): { ok: false; userVerification: boolean; reason: string } {
  const reason = err instanceof Error ? err.message : String(err);
  return { ok: false, userVerification: /user verification (was )?required/i.test(reason), reason };
}
