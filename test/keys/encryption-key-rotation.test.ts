// Rotating GATEHOUSE_ENCRYPTION_KEY, end to end on one database across restarts, as the operator
// does it (docs/operations.md): add the new key second, then make it first (start-up re-seals the
// signing keys under it, once, even with several services starting together), then drop the old
// one. Tokens issued before keep verifying; re-sealed rows no longer need the old key. Values
// sealed in the first format (v1, no key id) are still read. Without the key a value was sealed
// under, start-up fails naming that key's id.
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createService, type Service } from '../../src/compose.js';
import { SealedBox, keyId } from '../../src/crypto/sealed-box.js';
import { totpCodeAt } from '../../src/users/totp.js';
import type { Db } from '../../src/store/db.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET } from '../helpers/app.js';
import { openTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

const OLD = randomBytes(32);
const NEW = randomBytes(32);
const hex = (k: Buffer) => k.toString('hex');

function start(db: Db, keys: Buffer[]): Promise<Service> {
  return createService({
    config: loadConfig({
      GATEHOUSE_BASE_URL: 'http://gatehouse.test',
      GATEHOUSE_BOOTSTRAP_CLIENT_ID: ROOT_CLIENT_ID,
      GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_CLIENT_SECRET,
      GATEHOUSE_ENCRYPTION_KEY: keys.map(hex).join(','),
      GATEHOUSE_DATA_DIR: '/nonexistent/gatehouse-rotation-test',
      LOG_LEVEL: 'silent',
    }),
    db,
    logger: createLogger('silent'),
    migrate: false,
    flushIntervalMs: null,
    expiryIntervalMs: null,
    purgeIntervalMs: null,
  });
}

/** Stops a service but leaves its database open, as a restart of the process would find it. */
async function stopKeepingDb(service: Service): Promise<void> {
  await service.app.close();
  await service.lastUsed.stop();
}

async function token(service: Service): Promise<string> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/auth/api/v2/auth/token',
    headers: {
      authorization: 'Basic ' + Buffer.from(`${ROOT_CLIENT_ID}:${ROOT_CLIENT_SECRET}`).toString('base64'),
      'content-type': 'application/json',
    },
    payload: { grant_type: 'client_credentials' },
  });
  assert.equal(res.statusCode, 200, res.body);
  return JSON.parse(res.body).access_token as string;
}

const PASSWORD = 'a long and unusual passphrase';

/** A user created, given a password and enrolled through the sign-in service; the TOTP key. */
async function enrolledUser(service: Service, email: string): Promise<string> {
  const { sessions, signIn } = service.services;
  const res = await service.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { authorization: `Bearer ${await token(service)}`, 'content-type': 'application/json' },
    payload: { query: 'mutation($e: String!) { createUser(email: $e) { setup_url } }', variables: { e: email } },
  });
  const setup = new URL(JSON.parse(res.body).data.createUser.setup_url).searchParams.get('token')!;
  const opened = await signIn.openSetup(undefined, setup);
  assert.equal(opened.kind, 'next');
  let secret = opened.kind === 'next' ? opened.issued.secret : '';
  const now = async () => (await sessions.find(secret))!;
  const set = await signIn.setPassword(await now(), PASSWORD, PASSWORD);
  if (set.kind === 'next' && set.issued) secret = set.issued.secret;
  const enrol = (await signIn.enrolment(await now()))!;
  const done = await signIn.confirmEnrolment(await now(), totpCodeAt(enrol.base32, new Date()), { address: '192.0.2.1' });
  assert.equal(done.kind, 'signedIn');
  return enrol.base32;
}

/** A later sign-in with password and a code 30 s on (a fresh time step): the outcome's kind. */
async function signInWithCode(service: Service, email: string, base32: string): Promise<string> {
  const { sessions, signIn } = service.services;
  let { secret } = await sessions.start();
  const now = async () => (await sessions.find(secret))!;
  await signIn.email(await now(), email);
  const passed = await signIn.password(await now(), PASSWORD, { address: '192.0.2.1' });
  if (passed.kind === 'next' && passed.issued) secret = passed.issued.secret;
  return (await signIn.secondFactor(await now(), totpCodeAt(base32, new Date(Date.now() + 30_000)), { address: '192.0.2.1' })).kind;
}

/** The status of an authenticated request made with the token. */
async function accepted(service: Service, accessToken: string): Promise<number> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    payload: { query: '{ clients { client_id } }' },
  });
  return res.statusCode;
}

async function sealedRows(db: Db): Promise<{ kid: string; sealed: string }[]> {
  const rows = await db.kysely.selectFrom('signing_keys').select(['kid', 'private_jwk_sealed']).orderBy('kid').execute();
  return rows.map((r) => ({ kid: r.kid, sealed: r.private_jwk_sealed }));
}

/** The first sealed-value format, as earlier versions wrote it: v1.<iv>.<ciphertext>.<tag>, no key id. */
function sealV1(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

for (const engine of engines()) {
  describe(`encryption key rotation (${engine})`, () => {
    it('new key second, then first (re-sealed once, several services at once), then the old one dropped', async () => {
      const db = await openTestDb(engine);
      const running: Service[] = [];
      try {
        // 1. the old key alone: the signing key is sealed under it, and says so
        const s1 = await start(db, [OLD]);
        running.push(s1);
        const before = await token(s1);
        const [row] = await sealedRows(db);
        assert.ok(row);
        assert.ok(row.sealed.startsWith(`v2.${keyId(OLD)}.`), row.sealed.slice(0, 20));
        await stopKeepingDb(s1);

        // 2. the new key added second: nothing is re-sealed (processes without it must still read)
        const s2 = await start(db, [OLD, NEW]);
        running.push(s2);
        assert.equal(await accepted(s2, before), 200);
        assert.deepEqual(await sealedRows(db), [row]);
        await stopKeepingDb(s2);

        // 3. the new key first, on several services starting together: re-sealed under it, once
        const s3 = await Promise.all([start(db, [NEW, OLD]), start(db, [NEW, OLD]), start(db, [NEW, OLD])]);
        running.push(...s3);
        const [resealed] = await sealedRows(db);
        assert.equal(resealed!.kid, row.kid, 'the same signing key, sealed anew');
        assert.ok(resealed!.sealed.startsWith(`v2.${keyId(NEW)}.`), resealed!.sealed.slice(0, 20));
        for (const s of s3) assert.equal(await accepted(s, before), 200, 'a token issued before the rotation still verifies');
        const during = await token(s3[0]!);
        for (const s of s3) await stopKeepingDb(s);

        // 4. the old key dropped: the re-sealed rows no longer need it
        const s4 = await start(db, [NEW]);
        running.push(s4);
        assert.equal(await accepted(s4, before), 200);
        assert.equal(await accepted(s4, during), 200);
        assert.equal(await accepted(s4, await token(s4)), 200, 'it signs with the re-sealed key');
        await stopKeepingDb(s4);

        // without the key a value is sealed under, start-up fails, naming the missing key's id
        await assert.rejects(start(db, [OLD]), new RegExp(`sealed under encryption key id ${keyId(NEW)}\\b.*add that key`));
      } finally {
        for (const s of running) await stopKeepingDb(s).catch(() => {});
        await db.close();
      }
    });

    it('authenticator (TOTP) secrets are re-sealed under a new first key too, and keep working once the old key is dropped', async () => {
      const db = await openTestDb(engine);
      const running: Service[] = [];
      const sealedTotp = async () =>
        (await db.kysely.selectFrom('users').select('totp_secret_sealed').where('email', '=', 'rotating@example.com').executeTakeFirstOrThrow())
          .totp_secret_sealed!;
      try {
        const s1 = await start(db, [OLD]);
        running.push(s1);
        const base32 = await enrolledUser(s1, 'rotating@example.com');
        assert.ok((await sealedTotp()).startsWith(`v2.${keyId(OLD)}.`));
        await stopKeepingDb(s1);

        const s2 = await Promise.all([start(db, [NEW, OLD]), start(db, [NEW, OLD])]);
        running.push(...s2);
        assert.ok((await sealedTotp()).startsWith(`v2.${keyId(NEW)}.`), 're-sealed under the new first key');
        for (const s of s2) await stopKeepingDb(s);

        const s3 = await start(db, [NEW]);
        running.push(s3);
        assert.equal(await signInWithCode(s3, 'rotating@example.com', base32), 'signedIn', 'the authenticator still signs in');
        await stopKeepingDb(s3);
      } finally {
        for (const s of running) await stopKeepingDb(s).catch(() => {});
        await db.close();
      }
    });

    it('reads values sealed in the first format (v1) with any configured key, and re-seals them only for a new first key', async () => {
      const db = await openTestDb(engine);
      const running: Service[] = [];
      try {
        const s1 = await start(db, [OLD]);
        running.push(s1);
        const before = await token(s1);
        await stopKeepingDb(s1);
        // rewrite the row as an earlier version stored it
        const [row] = await sealedRows(db);
        const context = `signing-key:${row!.kid}`;
        const v1 = sealV1(OLD, new SealedBox([OLD]).open(row!.sealed, context), context);
        await db.kysely.updateTable('signing_keys').set({ private_jwk_sealed: v1 }).where('kid', '=', row!.kid).execute();

        // the same key: read, and left as it is (an older process could still read it)
        const s2 = await start(db, [OLD]);
        running.push(s2);
        assert.equal(await accepted(s2, before), 200);
        assert.equal((await sealedRows(db))[0]!.sealed, v1);
        await stopKeepingDb(s2);

        // the old key second: found by trying each key, and re-sealed under the first
        const s3 = await start(db, [NEW, OLD]);
        running.push(s3);
        assert.equal(await accepted(s3, before), 200);
        assert.ok((await sealedRows(db))[0]!.sealed.startsWith(`v2.${keyId(NEW)}.`));
        await stopKeepingDb(s3);

        const s4 = await start(db, [NEW]);
        running.push(s4);
        assert.equal(await accepted(s4, await token(s4)), 200);
        await stopKeepingDb(s4);

        // a v1 value under none of the keys: a clear failure, not a crash later
        await db.kysely.updateTable('signing_keys').set({ private_jwk_sealed: v1 }).where('kid', '=', row!.kid).execute();
        await assert.rejects(start(db, [NEW]), /cannot be decrypted: it was sealed with none of the keys in GATEHOUSE_ENCRYPTION_KEY/);
      } finally {
        for (const s of running) await stopKeepingDb(s).catch(() => {});
        await db.close();
      }
    });
  });
}
