// The store contract suite's harness (test/store/contract/): each file drives one capability's
// store interface directly, on every engine, with two tenants at once (as Ory Hydra's persister
// tests run one suite against every database with two networks): what one tenant writes is
// neither read, listed, changed nor deleted through the other's scope. Seed data goes through
// the stores themselves. The racing helpers run N calls at once: on PostgreSQL (a pool of
// connections) they really overlap, which is where a method that is not the one conditional
// statement it promises shows; PGlite runs one statement at a time, so there they prove the
// sequential contract only.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { ManualClock } from '../../../src/clock.js';
import { DuplicateKeyError, type UniqueKey } from '../../../src/errors.js';
import type { Engine } from '../../../src/store/db.js';
import { createStore, type Store } from '../../../src/store/index.js';
import type { Tenant } from '../../../src/tenants/model.js';
import type { NewUser } from '../../../src/users/store.js';
import type { NewClient } from '../../../src/credentials/store.js';
import { openTestDb, type TestDb } from '../../helpers/db.js';

/** How many calls a race runs at once: more than the PostgreSQL test pool's 8 connections. */
export const RACERS = 24;

/** A fixed instant the suites start from (moved by hand). */
export const T0 = new Date('2026-11-20T10:00:00.000Z');

export interface Contract {
  db: TestDb;
  clock: ManualClock;
  /** the persister without caches: every read goes to the database */
  store: Store;
}

export async function openContract(engine: Engine): Promise<Contract> {
  const db = await openTestDb(engine);
  const clock = new ManualClock(T0);
  return { db, clock, store: createStore(db.kysely, clock) };
}

export const ROOT = '1';

/** The vendor root (once per database), then two partner tenants under it: the two "networks". */
export async function twoTenants(store: Store, at = T0): Promise<{ a: Tenant; b: Tenant }> {
  if (!(await store.tenants.rootExists())) {
    await store.tenants.insertRoot({ name: 'Vendor', nameNormalized: 'vendor', createdAt: at, environments: ['echo', 'pilot'] });
  }
  const a = await newTenant(store, ROOT, '1.', { name: 'Tenant A', isPartner: true, at });
  const b = await newTenant(store, ROOT, '1.', { name: 'Tenant B', isPartner: true, at });
  return { a, b };
}

export function newTenant(
  store: Store,
  parentId: string,
  parentPath: string,
  opts: { name?: string; isPartner?: boolean; at?: Date; domain?: string } = {},
): Promise<Tenant> {
  const name = opts.name ?? `tenant ${randomUUID().slice(0, 8)}`;
  return store.tenants.insertTenant({
    parentId,
    parentPath,
    name,
    nameNormalized: name.toLowerCase(),
    isPartner: opts.isPartner ?? false,
    domain: opts.domain ?? null,
    domainNormalized: opts.domain?.toLowerCase() ?? null,
    description: null,
    allowResponseActions: false,
    actionsApprover: null,
    createdAt: opts.at ?? T0,
  });
}

/** A child of `parent`. */
export const childOf = (store: Store, parent: Tenant, opts: Parameters<typeof newTenant>[3] = {}) => newTenant(store, parent.id, parent.path, opts);

/** A user row of the tenant (an unused address unless given); inserted. */
export async function newUser(store: Store, tenantId: string, over: Partial<NewUser> = {}): Promise<NewUser> {
  const email = over.email ?? `u-${randomUUID().slice(0, 12)}@example.com`;
  const user: NewUser = {
    id: randomUUID(),
    tenantId,
    email,
    emailNormalized: email.toLowerCase(),
    displayName: '',
    passwordHash: '$argon2id$test',
    setupTokenHash: null,
    setupExpiresAt: null,
    createdAt: T0,
    createdBy: null,
    ...over,
  };
  await store.users.insertUser(user);
  return user;
}

/** A client row of the tenant (a fresh name and client_id unless given); not inserted. */
export function clientRow(tenantId: string, over: Partial<NewClient> = {}): NewClient {
  const name = over.name ?? `client ${randomUUID().slice(0, 8)}`;
  return {
    id: randomUUID(),
    tenantId,
    clientId: randomUUID().replaceAll('-', ''),
    name,
    nameNormalized: name.toLowerCase(),
    environment: 'echo',
    createdAt: T0,
    createdBy: 'contract-test',
    ...over,
  };
}

export const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();
export const at = (ms: number): Date => new Date(T0.getTime() + ms);
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** Runs `fn` `n` times at once and waits for every call, settled. */
export function race<T>(n: number, fn: (i: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  return Promise.allSettled(Array.from({ length: n }, (_, i) => fn(i)));
}

/** How many transactions a transaction race runs at once: the size of the PostgreSQL test pool
 *  (test/helpers/db.ts), so that every one of them holds a connection at the same time. */
export const TX_RACERS = 8;

/**
 * Runs `fn` in `n` transactions at once (at most TX_RACERS). On PostgreSQL each one, once begun,
 * waits until all `n` have begun, so that their reads and writes overlap as much as they can: a
 * lock that does not hold shows here (without the wait, the first transactions often commit
 * before the last ones begin). PGlite runs one transaction at a time: there they run in turn.
 */
export function raceTransactions<T>(c: Contract, n: number, fn: (tx: Store, i: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  assert.ok(n <= TX_RACERS, 'more transactions than connections would wait for each other forever');
  const begun = barrier(c.db.engine === 'postgres' ? n : 1);
  return race(n, (i) =>
    c.store.transaction(async (tx) => {
      await begun();
      return fn(tx, i);
    }),
  );
}

/** A wait that ends for everyone once `parties` callers are waiting. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    arrived += 1;
    if (arrived >= parties) release();
    return all;
  };
}

/** The values of a race whose calls must all have succeeded. */
export function fulfilled<T>(results: PromiseSettledResult<T>[]): T[] {
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  assert.deepEqual(
    failures.map((f) => String(f.reason)),
    [],
    'no call of the race may fail',
  );
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Asserts that exactly one call of a race succeeded and every other one failed with
 *  DuplicateKeyError(key); the index of the winner. */
export function oneWinsOthersDuplicate(results: PromiseSettledResult<unknown>[], key: UniqueKey): number {
  const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
  const others = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  assert.equal(winners.length, 1, `exactly one of ${results.length} inserts succeeds (${winners.length} did)`);
  for (const o of others) {
    assert.ok(o.reason instanceof DuplicateKeyError, `a losing insert fails with DuplicateKeyError, not ${String(o.reason)}`);
    assert.equal(o.reason.key, key);
  }
  return winners[0]!;
}

/** Asserts that `promise` fails with DuplicateKeyError(key). */
export async function rejectsDuplicate(promise: Promise<unknown>, key: UniqueKey): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DuplicateKeyError, `expected DuplicateKeyError(${key}), got ${String(err)}`);
    assert.equal(err.key, key);
    return true;
  });
}

/** How many of the results are `true`. */
export const trues = (values: boolean[]): number => values.filter((v) => v === true).length;
