// Device-authorization use cases (RFC 8628; docs/users.md, "Device login"): start, poll (the
// token endpoint's device grant), and the browser's side: find a code, approve or deny it as the
// signed-in person, who must be the account the CLI named.
import { tenantNameOf } from '../tenants/display-name.js';
import type { PrincipalStore } from '../access/store.js';
import { AttemptGate, type AttemptStores } from '../attempts/gate.js';
import { addressPrefix } from '../oauth/address-prefix.js';
import type { Clock } from '../clock.js';
import { digestOpaqueToken, isOpaqueToken, newOpaqueToken } from '../crypto/opaque-token.js';
import { DuplicateKeyError, type Refusal, refusal } from '../errors.js';
import type { Transactional } from '../transaction.js';
import { emailKey } from '../users/model.js';
import {
  canonicalUserCode,
  DEVICE_CODE_SECONDS,
  type DeviceAuthorization,
  type PollResult,
  isForAccount,
  newUserCode,
  POLL_INTERVAL_SECONDS,
  SLOW_DOWN_SECONDS,
  wrongAccount,
} from './model.js';
import type { DeviceStore } from './store.js';
import { principalEvent, type RequestInfo } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { MailSender } from '../mail/model.js';
import type { MailOutboxStore } from '../mail/store.js';
import type { TenantStore } from '../tenants/store.js';

export interface DeviceStores extends AttemptStores {
  device: DeviceStore;
  audit: AuditStore;
  principals: Pick<PrincipalStore, 'findUserPrincipal'>;
  /** an approval's notice is queued with it (docs/users.md "Notices") */
  mail: Pick<MailOutboxStore, 'insertMail'>;
  tenants: Pick<TenantStore, 'findTenant'>;
}

/** A user code looked up: the authorization it names, or why not (errors.ts, Refusal). */
export type Entry = { kind: 'ok'; authorization: DeviceAuthorization } | Refusal;

/** A code the person typed that names no pending authorization. */
const UNKNOWN_CODE = 'That code is not valid, or it expired. Check it, or start again at your command line.';
/** A code that no longer names a pending authorization by the time it is decided. */
const CODE_GONE = 'It expired or was already used. Start again at your command line.';

export interface DeviceStart {
  kind: 'started';
  deviceCode: string;
  userCode: string;
  expiresIn: number;
  interval: number;
}

export class DeviceService {
  private readonly gate: AttemptGate;

  constructor(
    private readonly store: Transactional<DeviceStores>,
    private readonly clock: Clock,
    private readonly mailer: MailSender,
    /** the seconds between polls a CLI is given (GATEHOUSE_DEVICE_POLL_INTERVAL_SECONDS) */
    private readonly pollIntervalSeconds = POLL_INTERVAL_SECONDS,
  ) {
    this.gate = new AttemptGate(store, clock);
  }

  /**
   * A new device login for the account named. Each start from an address counts (30 free, then
   * growing delays, forgotten after a quiet hour; attempts/model.ts): the endpoint needs no
   * credentials and writes a row. Counted before anything else, so starts made at once cannot
   * pass the allowance together.
   */
  async start(clientId: string, loginHint: string, address: string): Promise<DeviceStart | { kind: 'wait'; seconds: number }> {
    const reservation = await this.gate.reserve([['deviceStart', addressPrefix(address)]]);
    if (reservation.kind === 'wait') return { kind: 'wait', seconds: reservation.seconds };
    const hint = emailKey(loginHint);
    for (let attempt = 0; ; attempt++) {
      const deviceCode = newOpaqueToken();
      const userCode = newUserCode();
      const now = this.clock.now();
      try {
        await this.store.device.insertDeviceAuthorization({
          deviceCodeHash: digestOpaqueToken(deviceCode),
          userCode,
          clientId,
          loginHint: hint,
          status: 'pending',
          userId: null,
          intervalSeconds: this.pollIntervalSeconds,
          lastPolledAt: null,
          createdAt: now,
          expiresAt: new Date(now.getTime() + DEVICE_CODE_SECONDS * 1000),
          requestedFrom: address,
        });
        return { kind: 'started', deviceCode, userCode, expiresIn: DEVICE_CODE_SECONDS, interval: this.pollIntervalSeconds };
      } catch (err) {
        // 20^8 codes: a collision is rare, two in a row rarer still
        if (!(err instanceof DuplicateKeyError) || attempt >= 3) throw err;
      }
    }
  }

  /** One poll of the CLI. Polls of one code are serialized; too fast a poll slows the CLI down. */
  async poll(deviceCode: string, clientId: string): Promise<PollResult> {
    // anything but a token's shape names no code: not looked up
    if (!isOpaqueToken(deviceCode)) return { kind: 'invalid' };
    return await this.store.transaction(async (tx) => {
      const hash = digestOpaqueToken(deviceCode);
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
   * cannot be guessed at that pace within a code's 10 minutes. Each look-up is counted before it
   * is made and given back when the code is found, so look-ups made at once cannot pass the
   * allowance together.
   */
  async enter(raw: string, address: string): Promise<Entry> {
    const reservation = await this.gate.reserve([['userCode', addressPrefix(address)]]);
    if (reservation.kind === 'wait') {
      return refusal(429, `Too many wrong codes. Try again in ${reservation.seconds} seconds.`, { retryAfter: reservation.seconds });
    }
    const code = canonicalUserCode(raw);
    const found = code === undefined ? undefined : await this.pending(code);
    if (!found) return refusal(400, UNKNOWN_CODE);
    await this.gate.release(reservation);
    return { kind: 'ok', authorization: found };
  }

  /** A code a person may still act on (pending, unexpired), or undefined. */
  async pending(userCode: string): Promise<DeviceAuthorization | undefined> {
    const a = await this.store.device.findByUserCode(userCode);
    return a && a.status === 'pending' && a.expiresAt > this.clock.now() ? a : undefined;
  }

  /** The signed-in person approves or denies; only the account the CLI named may (403 else).
   *  `found`: the code's authorization as the caller just found it pending (enter), not read
   *  again; the decision is written only if it is still pending. */
  async decide(
    userCode: string,
    user: { id: string; email: string; tenantId: string },
    approve: boolean,
    found?: DeviceAuthorization,
    request?: RequestInfo,
    /** the approving browser's User-Agent, for the notice */
    userAgent?: string,
  ): Promise<{ kind: 'done' } | Refusal> {
    const a = found?.userCode === userCode ? found : await this.pending(userCode);
    if (!a) return refusal(400, CODE_GONE);
    if (!isForAccount(a, user.email)) return wrongAccount(user.email);
    const now = this.clock.now();
    // the decision and its audit event together: a code decided meanwhile writes neither
    const decided = await this.store.transaction(async (tx) => {
      if (!(await tx.device.decide(userCode, approve ? 'approved' : 'denied', user.id, now))) return false;
      await tx.audit.insertEvent(
        principalEvent(
          { kind: 'user', id: user.id, tenantId: user.tenantId, ...(request ? { request } : {}) },
          now,
          user.tenantId,
          approve ? 'device.approved' : 'device.denied',
          { kind: 'client', id: a.clientId },
          { client_id: a.clientId, requested_from: a.requestedFrom },
        ),
      );
      // every approval is told to the person (a device login hands out a token to act as them)
      if (approve) {
        await this.mailer.send(tx, {
          to: user.email,
          tenantId: user.tenantId,
          tenantName: await tenantNameOf(tx.tenants, user.tenantId),
          mail: {
            template: 'device_approved',
            at: now,
            by: 'self',
            address: request?.address,
            userAgent,
            detail: `client ${a.clientId}${a.requestedFrom ? `, started from the address ${a.requestedFrom}` : ''}`,
          },
        });
      }
      return true;
    });
    return decided ? { kind: 'done' } : refusal(400, CODE_GONE);
  }
}
