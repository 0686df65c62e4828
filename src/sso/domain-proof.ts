// SSO domains proven by DNS (docs/sso.md, "Domains proven by DNS"): the pure rules. A domain a
// connection claims is `pending` until a TXT record `_gatehouse-challenge.<domain>` holds the
// value shown once when it was claimed (or regenerated); then `proven`, and only then does it
// route people to the IdP and link their accounts. A proven domain is checked again every
// recheck period; one that fails keeps routing for a grace period (a DNS outage or a botched zone
// change is not an outage of sign-in), checked hourly meanwhile, then becomes `lost` (no routing,
// an audit event, a warning in the log) until its record is found again.
import { timingSafeEqual } from 'node:crypto';
import { digestOpaqueToken } from '../crypto/opaque-token.js';

export type DomainProofStatus = 'pending' | 'proven' | 'lost';

/** The label the TXT record is published under, before the domain. */
export const CHALLENGE_LABEL = '_gatehouse-challenge';

/** The name of the TXT record that proves `domain` (only this name is ever looked up). */
export function challengeName(domain: string): string {
  return `${CHALLENGE_LABEL}.${domain}`;
}

/** One domain of a connection, as its administrators see it. */
export interface SsoDomain {
  domain: string;
  status: DomainProofStatus;
  createdAt: Date;
  provenAt: Date | null;
  checkedAt: Date | null;
  /** what the last check found wrong (null after a success) */
  checkError: string | null;
  /** a proven domain failing its re-checks since then (it is lost at failingSince + grace) */
  failingSince: Date | null;
  nextCheckAt: Date;
  /** another connection (of whatever tenant) holds this domain proven */
  provenElsewhere: boolean;
}

/** A domain's proof as its administrators are shown it: with its value when the answer that
 *  issued it is being shown (else null), and when a failing proven domain stops routing. */
export interface ShownDomainProof extends SsoDomain {
  recordName: string;
  value: string | null;
  losesRoutingAt: Date | null;
}

export function shownProofs(
  connection: { domainProofs: readonly SsoDomain[]; issuedChallenges?: Readonly<Record<string, string>> },
  graceMs: number,
): ShownDomainProof[] {
  return connection.domainProofs.map((d) => ({
    ...d,
    recordName: challengeName(d.domain),
    value: connection.issuedChallenges?.[d.domain] ?? null,
    losesRoutingAt: d.status === 'proven' && d.failingSince ? new Date(d.failingSince.getTime() + graceMs) : null,
  }));
}

/** A claim as a check reads it: with the digest of its value. */
export interface DomainClaim extends SsoDomain {
  tenantId: string;
  connectionId: string;
  challengeHash: Uint8Array | null;
}

export interface DomainClaimPatch {
  status?: DomainProofStatus;
  challengeHash?: Uint8Array;
  provenAt?: Date | null;
  checkedAt?: Date;
  checkError?: string | null;
  failingSince?: Date | null;
  nextCheckAt?: Date;
}

/** What a lookup of the TXT record found: its strings (each record's chunks joined), or why not. */
export type TxtAnswer = { kind: 'found'; values: string[] } | { kind: 'failed'; reason: string };

export interface ProofTiming {
  /** how often a proven (or lost) domain is checked again */
  recheckMs: number;
  /** how long a proven domain keeps routing while its re-checks fail */
  graceMs: number;
}

const HOUR_MS = 3_600_000;
/** A pending claim is checked hourly for its first week (the record is usually published then), then at the recheck pace. */
export const PENDING_FAST_MS = 7 * 24 * HOUR_MS;
/** How often a failing proven domain, or a young pending claim, is checked. */
export const FAST_RECHECK_MS = HOUR_MS;

/** Whether one of the TXT strings found is the claim's value: their digests are compared, in constant time. */
export function holdsValue(values: readonly string[], challengeHash: Uint8Array | null): boolean {
  if (challengeHash === null) return false;
  const want = Buffer.from(challengeHash);
  let found = false;
  for (const v of values) {
    const got = digestOpaqueToken(v.trim());
    if (got.length === want.length && timingSafeEqual(got, want)) found = true;
  }
  return found;
}

export const PROVEN_ELSEWHERE =
  'another connection has proven this domain: it routes there; the record is checked again in case it is released or lost';

/** Why a check did not prove the claim, in words for the administrator (never the strings found). */
export function failureReason(domain: string, answer: TxtAnswer, challengeHash: Uint8Array | null): string {
  if (challengeHash === null)
    return `no value was issued for ${domain} yet: get one (regenerate) and publish it as the TXT record ${challengeName(domain)}`;
  if (answer.kind === 'failed') return answer.reason;
  return `${challengeName(domain)} has ${answer.values.length} TXT value${answer.values.length === 1 ? '' : 's'}, none of which is the value issued for this connection: publish the value shown when the domain was added (or regenerate one)`;
}

export type CheckEvent = 'proven' | 'lost' | 'failing' | undefined;

/**
 * The claim after a check: what changes, and what happened (proven, lost, failing for the first
 * time). `matched`: the record holds the claim's value; `provenElsewhere`: another connection
 * holds the domain proven (the value of this one then proves nothing while it does).
 */
export function afterCheck(
  before: Pick<DomainClaim, 'domain' | 'status' | 'createdAt' | 'failingSince' | 'challengeHash'>,
  answer: TxtAnswer,
  now: Date,
  timing: ProofTiming,
  provenElsewhere: boolean,
): { patch: DomainClaimPatch; event: CheckEvent } {
  const at = (ms: number) => new Date(now.getTime() + ms);
  const matched = answer.kind === 'found' && holdsValue(answer.values, before.challengeHash);
  if (matched && !provenElsewhere) {
    return {
      patch: {
        status: 'proven',
        ...(before.status === 'proven' ? {} : { provenAt: now }),
        checkedAt: now,
        checkError: null,
        failingSince: null,
        nextCheckAt: at(timing.recheckMs),
      },
      event: before.status === 'proven' ? undefined : 'proven',
    };
  }
  const reason = matched ? PROVEN_ELSEWHERE : failureReason(before.domain, answer, before.challengeHash);
  if (before.status === 'pending') {
    const young = now.getTime() - before.createdAt.getTime() < PENDING_FAST_MS;
    return { patch: { checkedAt: now, checkError: reason, nextCheckAt: at(young ? FAST_RECHECK_MS : timing.recheckMs) }, event: undefined };
  }
  if (before.status === 'lost') return { patch: { checkedAt: now, checkError: reason, nextCheckAt: at(timing.recheckMs) }, event: undefined };
  const since = before.failingSince ?? now;
  const lostAt = new Date(since.getTime() + timing.graceMs);
  if (now >= lostAt) {
    return {
      patch: { status: 'lost', checkedAt: now, checkError: `${reason} (failing since ${since.toISOString()})`, nextCheckAt: at(timing.recheckMs) },
      event: 'lost',
    };
  }
  return {
    patch: {
      checkedAt: now,
      failingSince: since,
      checkError: `${reason}; the domain keeps routing until ${lostAt.toISOString()}, then stops unless the record is found`,
      nextCheckAt: new Date(Math.min(now.getTime() + FAST_RECHECK_MS, Math.max(lostAt.getTime(), now.getTime() + 1))),
    },
    event: before.failingSince === null ? 'failing' : undefined,
  };
}

/** The domains a connection routes and links people by: its proven ones. */
export function provenDomains(connection: { domainProofs: readonly SsoDomain[] }): string[] {
  return connection.domainProofs.filter((d) => d.status === 'proven').map((d) => d.domain);
}
