// The signing keys' use cases for operators and the rotation job: list them, rotate (a successor
// pre-published, signing later), retire one at once (a compromise), and the automatic rotation.
// Only whoever holds the database does these (the `gatehouse keys` command, the service's own
// job): the actor is the operator (the OS user, `operator`) or the system (`system:rotation`). Each change is one transaction
// under the key lock, read again inside it, so that of processes racing exactly one acts, and
// writes its audit event. The key ring of every process sees the change through the change signal.
import { ROOT_TENANT_ID } from '../access/roles.js';
import type { AuditEvent, OperatorActor } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import { badInput } from '../errors.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import type { Transactional } from '../transaction.js';
import { applyKeyPlan, sealContext } from './key-plan.js';
import {
  dueRotation,
  keyState,
  planRetirement,
  planRotation,
  signerAt,
  unpublishedAt,
  type KeyPlan,
  type KeyState,
  type KeyTimes,
  type RotationSettings,
} from './model.js';
import type { KeyStore, StoredSigningKey } from './store.js';

export interface KeyServiceStores {
  keys: KeyStore;
  audit: AuditStore;
}

/** who changes the keys: an operator (`gatehouse keys`) or the rotation job */
export type KeyActor = OperatorActor | { kind: 'system'; id: 'rotation' };

/** A key as `gatehouse keys list` shows it. */
export interface KeyListing extends KeyTimes {
  state: KeyState;
  /** when it leaves (or left) the JWKS; undefined while it signs with no successor, or will */
  unpublishedAt: Date | undefined;
}

/** What a rotation or a retirement did: the key that signs now and the one planned next. */
export interface KeyChange {
  /** the key made, if any */
  created: KeyTimes | undefined;
  signing: string;
  /** the successor, pre-published, and when it signs */
  next: { kid: string; signsFrom: Date } | undefined;
}

export class KeyService {
  constructor(
    private readonly store: Transactional<KeyServiceStores>,
    /** undefined: no key can be made (the `keys` command without the encryption key) */
    private readonly box: SealedBox | undefined,
    private readonly clock: Clock,
    private readonly settings: RotationSettings,
  ) {}

  async list(): Promise<KeyListing[]> {
    const now = this.clock.now();
    return (await this.store.keys.listKeys()).map((k) => ({
      kid: k.kid,
      createdAt: k.createdAt,
      signsFrom: k.signsFrom,
      signsUntil: k.signsUntil,
      retiredAt: k.retiredAt,
      state: keyState(k, now, this.settings.tokenLifetimeMs),
      unpublishedAt: unpublishedAt(k, this.settings.tokenLifetimeMs),
    }));
  }

  /** A normal rotation now: a successor published at once, signing after the pre-publication period. */
  async rotate(actor: KeyActor): Promise<KeyChange> {
    return await this.change(actor, 'signing_key.rotated', (keys, now) =>
      planRotation(keys, now, new Date(now.getTime() + this.settings.prepublishMs)),
    );
  }

  /** The automatic rotation (the job of compose.ts): a successor when one is due, else nothing. */
  async rotateIfDue(): Promise<KeyChange | undefined> {
    if (dueRotation(await this.store.keys.listKeys(), this.clock.now(), this.settings) === undefined) return undefined;
    let due = false;
    const change = await this.change({ kind: 'system', id: 'rotation' }, 'signing_key.rotated', (keys, now) => {
      const signsFrom = dueRotation(keys, now, this.settings);
      if (signsFrom === undefined) return { updates: [] };
      due = true;
      return planRotation(keys, now, signsFrom);
    });
    return due ? change : undefined;
  }

  /** Retires a key at once: out of the JWKS, its tokens refused; if it signed, another key signs at once. */
  async retire(actor: KeyActor, kid: string): Promise<KeyChange> {
    return await this.change(actor, 'signing_key.retired', (keys, now) => planRetirement(keys, kid, now, this.settings.tokenLifetimeMs), kid);
  }

  private async change(actor: KeyActor, action: string, plan: (keys: KeyTimes[], now: Date) => KeyPlan, target?: string): Promise<KeyChange> {
    return await this.store.transaction(async (tx) => {
      await tx.keys.lockKeys();
      const now = this.clock.now();
      const before = await tx.keys.listKeys();
      const p = plan(before, now);
      if (p.updates.length === 0 && p.newKeySignsFrom === undefined) return this.outcome(before, now, undefined);
      const box = p.newKeySignsFrom === undefined ? undefined : this.sealingBox(before, now);
      const created = await applyKeyPlan(tx.keys, box, p, now);
      const after = await tx.keys.listKeys();
      const result = this.outcome(after, now, created);
      await tx.audit.insertEvent(
        keyEvent(actor, now, action, target ?? created?.kid ?? result.signing, {
          signing: result.signing,
          ...(result.next ? { next: result.next.kid, next_signs_from: result.next.signsFrom.toISOString() } : {}),
          ...(created ? { created: created.kid } : {}),
        }),
      );
      return result;
    });
  }

  /**
   * A new key is sealed with this process's first encryption key: one the servers do not have
   * would make a key no server can load. Being able to open the key signing now shows this
   * process holds the servers' encryption keys.
   */
  private sealingBox(keys: StoredSigningKey[], now: Date): SealedBox {
    if (!this.box) throw badInput("making a signing key needs the encryption key: give the servers' GATEHOUSE_ENCRYPTION_KEY");
    const signer = signerAt(keys, now) ?? keys.find((k) => k.retiredAt === null);
    if (!signer) return this.box;
    try {
      this.box.open(signer.privateJwkSealed, sealContext(signer.kid));
    } catch {
      throw badInput(
        `this process's encryption key cannot open signing key ${signer.kid}, so a key it made could not be loaded by the servers: ` +
          "give the servers' GATEHOUSE_ENCRYPTION_KEY (all of it, the first key first)",
      );
    }
    return this.box;
  }

  private outcome(keys: KeyTimes[], now: Date, created: KeyTimes | undefined): KeyChange {
    const signer = signerAt(keys, now);
    if (!signer) throw new Error('no signing key signs after the change');
    const next = keys.find((k) => k.retiredAt === null && k.signsFrom > now && k.signsFrom.getTime() === signer.signsUntil?.getTime());
    return { created, signing: signer.kid, next: next ? { kid: next.kid, signsFrom: next.signsFrom } : undefined };
  }
}

function keyEvent(actor: KeyActor, occurredAt: Date, action: string, kid: string, details: Record<string, unknown>): AuditEvent {
  return { occurredAt, tenantId: ROOT_TENANT_ID, actor, action, target: { kind: 'signing_key', id: kid }, details };
}
