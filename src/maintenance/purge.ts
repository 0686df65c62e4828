// The rows that only ever pile up, deleted once they can no longer matter: sessions past their
// absolute or idle end, device authorizations a day after they expired (until then a late poll
// still hears `expired_token` rather than `invalid_grant`), and failure counts past their quiet
// hour, SAML requests and used-assertion ids past their time. Run every few minutes by compose.ts; plain deletes by time, so several processes may run
// it at once.
import type { Clock } from '../clock.js';
import type { DeviceStore } from '../device/store.js';
import type { SessionStore } from '../sessions/store.js';
import type { SignInStore } from '../signin/store.js';
import { countsSince } from '../signin/throttle.js';
import type { SsoStore } from '../sso/store.js';

export interface PurgeStores {
  sessions: Pick<SessionStore, 'deleteExpiredSessions'>;
  device: Pick<DeviceStore, 'deleteExpiredDeviceAuthorizations'>;
  signIn: Pick<SignInStore, 'deleteStaleFailures'>;
  sso: Pick<SsoStore, 'purgeExpired'>;
}

/** how long an expired device authorization is kept */
const DEVICE_KEPT_MS = 24 * 60 * 60 * 1000;

export interface Purged {
  sessions: number;
  deviceAuthorizations: number;
  failureCounts: number;
  /** SAML requests past their time and used-assertion ids past the assertion's */
  samlRecords: number;
}

export async function purgeExpired(store: PurgeStores, clock: Clock, settings: { sessionIdleSeconds: number }): Promise<Purged> {
  const now = clock.now();
  return {
    sessions: await store.sessions.deleteExpiredSessions(now, new Date(now.getTime() - settings.sessionIdleSeconds * 1000)),
    deviceAuthorizations: await store.device.deleteExpiredDeviceAuthorizations(new Date(now.getTime() - DEVICE_KEPT_MS)),
    failureCounts: await store.signIn.deleteStaleFailures(countsSince(now)),
    samlRecords: await store.sso.purgeExpired(now),
  };
}
