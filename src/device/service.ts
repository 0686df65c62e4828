// Device-authorization use cases (RFC 8628; docs/users.md, "Device login"): start, poll (the
// token endpoint's device grant), and the browser's side: find a code, approve or deny it as the
// signed-in person, who must be the account the CLI named.
import type { PrincipalStore } from '../access/store.js';
import { addressPrefix } from '../oauth/address-prefix.js';
import type { SignInStore } from '../signin/store.js';
import { countsSince, failureKey, waitSeconds } from '../signin/throttle.js';
import type { Clock } from '../clock.js';
import { DuplicateKeyError } from '../errors.js';
import type { Transactional } from '../transaction.js';
import { emailKey } from '../users/model.js';
import {
  canonicalUserCode,
  DEVICE_CODE_SECONDS,
  type DeviceAuthorization,
  hashDeviceCode,
  newDeviceCode,
  newUserCode,
  POLL_INTERVAL_SECONDS,
  PUBLIC_CLIENTS,
  SLOW_DOWN_SECONDS,
} from './model.js';
import type { DeviceStore } from './store.js';

export interface DeviceStores {
  device: DeviceStore;
  principals: Pick<PrincipalStore, 'findUserPrincipal'>;
  signIn: Pick<SignInStore, 'findFailures' | 'recordFailure'>;
}

export type Entry = { kind: 'ok'; authorization: DeviceAuthorization } | { kind: 'unknown' } | { kind: 'wait'; seconds: number };

export interface DeviceStart {
  kind: 'started';
  deviceCode: string;
  userCode: string;
  expiresIn: number;
  interval: number;
}

/** What a poll comes to; the token endpoint turns each into its RFC 8628 answer. */
export type PollResult =
  | { kind: 'pending' }
  | { kind: 'slow_down'; interval: number }
  | { kind: 'expired' }
  | { kind: 'denied' }
  /** unknown code, another client's code, or a token already issued for it */
  | { kind: 'invalid' }
  /** approved by a user who is still active: its id and home tenant */
  | { kind: 'approved'; userId: string; tenantId: string };

export type StartProblem = 'unknown_client' | 'missing_login_hint';

export class DeviceService {
  constructor(
    private readonly store: Transactional<DeviceStores>,
    private readonly clock: Clock,
  ) {}

  isPublicClient(clientId: string | undefined): boolean {
    return clientId !== undefined && (PUBLIC_CLIENTS as readonly string[]).includes(clientId);
  }

  /**
   * A new device login for the account named. Each start from an address counts (30 free, then
   * growing delays, forgotten after a quiet hour): the endpoint needs no credentials and writes a row.
   */
  async start(clientId: string, loginHint: string, address: string): Promise<DeviceStart | { kind: 'wait'; seconds: number }> {
    const key = failureKey('deviceStart', addressPrefix(address));
    const now0 = this.clock.now();
    const f = await this.store.signIn.findFailures(key);
    const wait = f ? waitSeconds('deviceStart', f.failures, f.lastFailureAt, now0) : 0;
    if (wait > 0) return { kind: 'wait', seconds: wait };
    await this.store.signIn.recordFailure(key, now0, countsSince(now0));
    const hint = emailKey(loginHint);
    for (let attempt = 0; ; attempt++) {
      const deviceCode = newDeviceCode();
      const userCode = newUserCode();
      const now = this.clock.now();
      try {
        await this.store.device.insertDeviceAuthorization({
          deviceCodeHash: hashDeviceCode(deviceCode),
          userCode,
          clientId,
          loginHint: hint,
          status: 'pending',
          userId: null,
          intervalSeconds: POLL_INTERVAL_SECONDS,
          lastPolledAt: null,
          createdAt: now,
          expiresAt: new Date(now.getTime() + DEVICE_CODE_SECONDS * 1000),
          requestedFrom: address,
        });
        return { kind: 'started', deviceCode, userCode, expiresIn: DEVICE_CODE_SECONDS, interval: POLL_INTERVAL_SECONDS };
      } catch (err) {
        // 20^8 codes: a collision is rare, two in a row rarer still
        if (!(err instanceof DuplicateKeyError) || attempt >= 3) throw err;
      }
    }
  }

  /** One poll of the CLI. Polls of one code are serialized; too fast a poll slows the CLI down. */
  async poll(deviceCode: string, clientId: string): Promise<PollResult> {
    return await this.store.transaction(async (tx) => {
      const hash = hashDeviceCode(deviceCode);
      const a = await tx.device.lockByDeviceCode(hash);
      if (!a || a.clientId !== clientId || a.status === 'issued') return { kind: 'invalid' };
      const now = this.clock.now();
      if (a.expiresAt <= now) return { kind: 'expired' };
      if (a.lastPolledAt && now.getTime() - a.lastPolledAt.getTime() < a.intervalSeconds * 1000) {
        const interval = a.intervalSeconds + SLOW_DOWN_SECONDS;
        await tx.device.recordPoll(hash, now, interval);
        return { kind: 'slow_down', interval };
      }
      await tx.device.recordPoll(hash, now, a.intervalSeconds);
      if (a.status === 'pending') return { kind: 'pending' };
      if (a.status === 'denied') return { kind: 'denied' };
      // approved: the token goes out once
      if (!a.userId || !(await tx.device.markIssued(hash))) return { kind: 'invalid' };
      const principal = await tx.principals.findUserPrincipal(a.userId);
      if (!principal) return { kind: 'invalid' };
      return { kind: 'approved', userId: principal.id, tenantId: principal.tenantId };
    });
  }

  /**
   * A user code a person typed (or followed in a link): the authorization if it is pending. Wrong
   * codes from one address slow that address down (10 free, then growing delays): 20^8 codes
   * cannot be guessed at that pace within a code's 10 minutes.
   */
  async enter(raw: string, address: string): Promise<Entry> {
    const key = failureKey('userCode', addressPrefix(address));
    const now = this.clock.now();
    const f = await this.store.signIn.findFailures(key);
    const wait = f ? waitSeconds('userCode', f.failures, f.lastFailureAt, now) : 0;
    if (wait > 0) return { kind: 'wait', seconds: wait };
    const code = canonicalUserCode(raw);
    const found = code === undefined ? undefined : await this.pending(code);
    if (!found) {
      await this.store.signIn.recordFailure(key, now, countsSince(now));
      return { kind: 'unknown' };
    }
    return { kind: 'ok', authorization: found };
  }

  /** A code a person may still act on (pending, unexpired), or undefined. */
  async pending(userCode: string): Promise<DeviceAuthorization | undefined> {
    const a = await this.store.device.findByUserCode(userCode);
    return a && a.status === 'pending' && a.expiresAt > this.clock.now() ? a : undefined;
  }

  /** The signed-in person approves or denies; only the account the CLI named may. */
  async decide(userCode: string, user: { id: string; email: string }, approve: boolean): Promise<'done' | 'wrong_account' | 'gone'> {
    const a = await this.pending(userCode);
    if (!a) return 'gone';
    if (emailKey(user.email) !== a.loginHint) return 'wrong_account';
    return (await this.store.device.decide(userCode, approve ? 'approved' : 'denied', user.id, this.clock.now())) ? 'done' : 'gone';
  }
}
