// The rows that only ever pile up, deleted once they can no longer matter: sessions past their
// absolute or idle end, device authorizations a day after they expired (until then a late poll
// still hears `expired_token` rather than `invalid_grant`), attempt counts past their quiet hour
// or window (sign-in, device login; the 30-day count of second-factor codes after its 30 days) or their window (token endpoint), recognised browsers past
// their time, SAML requests and used-assertion ids past their time, revocations of tokens that
// have expired, audit events past their retention, idempotency keys past their 24 hours. And the tenants' subtree sizes, appended a row per change, are folded into one row per
// tenant. Run every few minutes by compose.ts; each step is one statement that several processes
// may run at once.
import type { Clock } from '../clock.js';
import type { AuditStore } from '../audit/store.js';
import type { DeviceStore } from '../device/store.js';
import { HEARTBEAT_KEPT_DAYS, type HeartbeatStore } from './heartbeat.js';
import type { SessionStore } from '../sessions/store.js';
import { ATTEMPT_RULES, LONG_KINDS, LONGEST_RESET_SECONDS } from '../attempts/model.js';
import type { AttemptStore } from '../attempts/store.js';
import type { SignInStore } from '../signin/store.js';
import type { SsoStore } from '../sso/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { TokenThrottleStore } from '../oauth/throttle-store.js';
import { WINDOW_MS } from '../oauth/failure-throttle.js';
import type { RevokedTokenStore } from '../oauth/revocation-store.js';
import type { IdempotencyStore } from '../idempotency/store.js';

export interface PurgeStores {
  sessions: Pick<SessionStore, 'deleteExpiredSessions'>;
  device: Pick<DeviceStore, 'deleteExpiredDeviceAuthorizations'>;
  attempts: Pick<AttemptStore, 'deleteStaleAttempts'>;
  signIn: Pick<SignInStore, 'deleteExpiredBrowsers'>;
  sso: Pick<SsoStore, 'purgeExpired'>;
  tokenThrottle: Pick<TokenThrottleStore, 'deleteStaleTokenThrottle'>;
  tenants: Pick<TenantStore, 'foldSubtreeSizes'>;
  revokedTokens: Pick<RevokedTokenStore, 'deleteExpiredRevocations'>;
  audit: Pick<AuditStore, 'deleteEventsBefore'>;
  heartbeats: Pick<HeartbeatStore, 'deleteSeenBefore'>;
  idempotency: Pick<IdempotencyStore, 'deleteExpiredKeys'>;
}

/** how long an expired device authorization is kept */
const DEVICE_KEPT_MS = 24 * 60 * 60 * 1000;

export interface Purged {
  sessions: number;
  deviceAuthorizations: number;
  failureCounts: number;
  /** SAML requests past their time and used-assertion ids past the assertion's */
  samlRecords: number;
  /** browsers no longer recognised (RECOGNISED_DAYS after their last sign-in) */
  recognisedBrowsers: number;
  /** subtree-size rows folded into one per tenant (they are appended by every tenant created) */
  subtreeSizeRows: number;
  /** revocations (RFC 7009) of tokens now expired, refused for that reason alone */
  revokedTokens: number;
  /** audit events older than GATEHOUSE_AUDIT_RETENTION_DAYS */
  auditEvents: number;
  /** heartbeat rows of processes gone HEARTBEAT_KEPT_DAYS */
  processes: number;
  /** Idempotency-Keys past their 24 hours */
  idempotencyKeys: number;
}

export async function purgeExpired(
  store: PurgeStores,
  clock: Clock,
  settings: { sessionIdleSeconds: number; auditRetentionDays: number },
): Promise<Purged> {
  const now = clock.now();
  return {
    sessions: await store.sessions.deleteExpiredSessions(now, new Date(now.getTime() - settings.sessionIdleSeconds * 1000)),
    deviceAuthorizations: await store.device.deleteExpiredDeviceAuthorizations(new Date(now.getTime() - DEVICE_KEPT_MS)),
    failureCounts:
      (await store.attempts.deleteStaleAttempts(
        new Date(now.getTime() - LONGEST_RESET_SECONDS * 1000),
        LONG_KINDS.map((kind) => ({ kind, before: new Date(now.getTime() - ATTEMPT_RULES[kind].resetSeconds * 1000) })),
      )) + (await store.tokenThrottle.deleteStaleTokenThrottle(new Date(now.getTime() - WINDOW_MS))),
    samlRecords: await store.sso.purgeExpired(now),
    recognisedBrowsers: await store.signIn.deleteExpiredBrowsers(now),
    subtreeSizeRows: await store.tenants.foldSubtreeSizes(),
    // a token is refused CLOCK_SKEW_SECONDS after its exp at the latest; a minute is ample
    revokedTokens: await store.revokedTokens.deleteExpiredRevocations(new Date(now.getTime() - 60_000)),
    auditEvents: await store.audit.deleteEventsBefore(new Date(now.getTime() - settings.auditRetentionDays * 86_400_000)),
    processes: await store.heartbeats.deleteSeenBefore(new Date(now.getTime() - HEARTBEAT_KEPT_DAYS * 86_400_000)),
    idempotencyKeys: await store.idempotency.deleteExpiredKeys(now),
  };
}
