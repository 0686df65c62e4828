// Signing-key rotation (issue 22 point 1, docs/tokens.md "Signing keys"), on every engine:
// - across a normal rotation, tokens keep verifying through the JWKS with jose's remote key set
//   against a listening server; a resource server whose cache was filled during the
//   pre-publication period verifies the new key's tokens without fetching again, one with jose's
//   default 10-minute cache filled before the rotation fetches once for its cache's age (never for
//   the unknown kid) and verifies them, and one whose cache never expires and was filled before
//   the key was published cannot (why the period exists); the previous key leaves the JWKS a
//   token lifetime after it stopped signing;
// - the automatic rotation makes exactly one successor when due, even with processes racing
//   (two services on one PostgreSQL database; on PGlite, calls at once in one);
// - an emergency retirement refuses the key's tokens at once on every process (two services on
//   one PostgreSQL database), well within the second the issue allows, and the next token is
//   signed by another key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  type ExportedJWKSCache,
  type JWK,
  jwksCache,
  jwtVerify,
} from 'jose';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, TEST_BASE_URL, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { openDb } from '../../src/store/db.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LIST_CLIENTS = '{ clients { client_id } }';
const kidOf = (token: string) => decodeProtectedHeader(token).kid!;

/** A second service on the same PostgreSQL database and clock, as another process would be. */
async function secondProcess(t: TestApp): Promise<TestApp> {
  if (!t.db.url) throw new Error('a second process needs a PostgreSQL database');
  return startTestApp({ engine: 'postgres', clock: t.clock, db: await openDb({ engine: 'postgres', url: t.db.url }) });
}

/** Polls until the token is refused by `t`; the milliseconds it took. Fails after `limitMs`. */
async function refusedWithin(t: TestApp, token: string, limitMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const res = await t.gql(token, LIST_CLIENTS);
    const elapsed = performance.now() - t0;
    if (res.status === 401) {
      assert.match(res.body.errors[0].message, /signed with a key this server does not have/);
      return elapsed;
    }
    assert.equal(res.status, 200, res.text);
    if (elapsed > limitMs) assert.fail(`the retired key's token was still accepted after ${Math.round(elapsed)} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const engine of engines()) {
  describe(`signing-key rotation (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    it('tokens verify across a rotation through the JWKS (jose remote key set); the new key is pre-published, the old one leaves after a token lifetime', async () => {
      const base = await listen(t);
      let fetches = 0;
      const counted: typeof fetch = (url, init) => {
        fetches++;
        return fetch(url, init);
      };
      const jwksUrl = new URL(`${base}/.well-known/jwks.json`);
      // a resource server that never fetches again on its own: what it verifies, it verifies from its cache
      const cachingServer = () =>
        createRemoteJWKSet(jwksUrl, { cacheMaxAge: Number.POSITIVE_INFINITY, cooldownDuration: Number.POSITIVE_INFINITY, [customFetch]: counted });
      const verifyWith = (jwks: ReturnType<typeof createRemoteJWKSet>, token: string) =>
        jwtVerify(token, jwks, { issuer: TEST_BASE_URL, audience: TEST_BASE_URL, currentDate: t.clock.now() });

      const before = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      const oldKid = kidOf(before);
      const early = cachingServer();
      await verifyWith(early, before);
      // a resource server with jose's default cache (10 minutes), whose cache (jose's jwksCache,
      // as a serverless function keeps it between runs) was filled before the rotation; it never
      // fetches for an unknown kid (cooldown without end): only its cache's age makes it fetch
      const kept = {} as ExportedJWKSCache;
      const defaultCache = (cache: ExportedJWKSCache) =>
        createRemoteJWKSet(jwksUrl, { cooldownDuration: Number.POSITIVE_INFINITY, [jwksCache]: cache, [customFetch]: counted });
      await verifyWith(defaultCache(kept), before);
      assert.deepEqual(
        kept.jwks.keys.map((k) => k.kid),
        [oldKid],
      );

      const change = await t.service.services.signingKeys.rotate({ kind: 'operator', id: 'test' });
      assert.equal(change.signing, oldKid, 'the current key goes on signing during the pre-publication period');
      const newKid = change.next!.kid;
      assert.notEqual(newKid, oldKid);
      assert.equal(change.next!.signsFrom.getTime(), t.clock.now().getTime() + 24 * HOUR, 'the default pre-publication period is 24 hours');
      const published = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys.map((k: JWK) => k.kid);
      assert.deepEqual(published.sort(), [oldKid, newKid].sort(), 'the next key is in the JWKS at once');
      assert.equal(kidOf(await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET)), oldKid, 'and signs nothing yet');

      // a resource server whose cache is filled during the pre-publication period (a cache of up to 24 h would be)
      const duringPrepublication = cachingServer();
      await verifyWith(duringPrepublication, before);
      const fetchesBefore = fetches;

      t.clock.advance(24 * HOUR);
      const after = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      assert.equal(kidOf(after), newKid, 'the new key signs once the pre-publication period is over');
      await verifyWith(duringPrepublication, after);
      assert.equal(fetches, fetchesBefore, 'the cached key set verified the new key without fetching again');
      // the cache taken before the rotation, a pre-publication period (24 h) older: older than
      // its 10 minutes, so it is fetched again on first use, and holds the new key
      const aged = { ...kept, uat: kept.uat - 24 * HOUR };
      await verifyWith(defaultCache(aged), after);
      assert.equal(fetches, fetchesBefore + 1);
      assert.ok(aged.jwks.keys.some((k) => k.kid === newKid));
      // a resource server with jose's defaults verifies both (it fetches on an unknown kid)
      const ordinary = createRemoteJWKSet(jwksUrl);
      await verifyWith(ordinary, after);
      // a token of the old key, signed just before the switch, still verifies where it is used
      t.clock.advance(-1000);
      const lastOfOld = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      t.clock.advance(1000);
      assert.equal(kidOf(lastOfOld), oldKid);
      await verifyWith(ordinary, lastOfOld);
      assert.equal((await t.gql(lastOfOld, LIST_CLIENTS)).status, 200);
      assert.ok(
        (await t.service.services.keys.jwks()).keys.some((k) => k.kid === oldKid),
        'the old key stays published while its tokens live',
      );
      // a cache that never saw the new key cannot verify its tokens: why the pre-publication exists
      await assert.rejects(verifyWith(early, after));

      // a token lifetime (and the clock skew tolerated) after it stopped signing, the old key leaves the JWKS
      t.clock.advance((t.config.tokenTtlSeconds + 5) * 1000);
      const left = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys.map((k: JWK) => k.kid);
      assert.deepEqual(left, [newKid]);
      const states = Object.fromEntries((await t.service.services.signingKeys.list()).map((k) => [k.kid, k.state]));
      assert.equal(states[oldKid], 'expired');
      assert.equal(states[newKid], 'signing');
      assert.equal((await t.gql(await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), LIST_CLIENTS)).status, 200);
    });

    it('refuses a second rotation while one is under way, naming the next key', async () => {
      await t.service.services.signingKeys.rotate({ kind: 'operator', id: 'test' });
      await assert.rejects(t.service.services.signingKeys.rotate({ kind: 'operator', id: 'test' }), (err: Error) => {
        assert.match(err.message, /a rotation is under way already: key \S+ is published and signs from /);
        return true;
      });
      // the rotation started here completes, for the tests below
      t.clock.advance(25 * HOUR);
    });

    it('rotates by itself when the signer has signed its days: exactly one successor however many processes try', async () => {
      const others = engine === 'postgres' ? [await secondProcess(t), await secondProcess(t)] : [];
      try {
        const signer = (await t.service.services.signingKeys.list()).find((k) => k.state === 'signing')!;
        t.clock.set(new Date(signer.signsFrom.getTime() + 89 * DAY - HOUR));
        assert.equal(await t.service.services.signingKeys.rotateIfDue(), undefined, 'not due a day before');
        // due from the day its successor must be published (its pre-publication period before the 90th day)
        t.clock.advance(HOUR);
        const services = [t, ...others, t, ...others].map((x) => x.service.services.signingKeys);
        const results = await Promise.all(services.map((s) => s.rotateIfDue()));
        const made = results.filter((r) => r !== undefined);
        assert.equal(made.length, 1, 'one successor');
        assert.equal(made[0]!.next!.signsFrom.getTime(), signer.signsFrom.getTime() + 90 * DAY, 'signing from the 90th day');
        const pending = (await t.service.services.signingKeys.list()).filter((k) => k.state === 'pending');
        assert.equal(pending.length, 1);
      } finally {
        for (const o of others) await o.close();
      }
    });

    it('an emergency retirement refuses the key’s tokens at once on every process; the next token has another key', async (ctx) => {
      const second = engine === 'postgres' ? await secondProcess(t) : undefined;
      try {
        const processes = second ? [t, second] : [t];
        const token = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const kid = kidOf(token);
        // each process has verified it (and remembers that it did)
        for (const p of processes) assert.equal((await p.gql(token, LIST_CLIENTS)).status, 200);
        await t.service.services.signingKeys.retire({ kind: 'operator', id: 'test' }, kid);
        for (const p of processes) {
          const took = await refusedWithin(p, token, 1000);
          assert.ok(took < 1000, `refused after ${took} ms`);
          ctx.diagnostic(`refused by process ${processes.indexOf(p) + 1} after ${Math.round(took)} ms`);
        }
        const jwks = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys.map((k: JWK) => k.kid);
        assert.ok(!jwks.includes(kid), 'out of the JWKS');
        for (const p of processes) {
          const next = await p.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
          assert.notEqual(kidOf(next), kid);
          assert.equal((await p.gql(next, LIST_CLIENTS)).status, 200);
        }
        const events = await t.db.kysely.selectFrom('audit_events').selectAll().where('action', 'like', 'signing_key.%').execute();
        assert.ok(events.some((e) => e.action === 'signing_key.retired' && e.target_id === kid));
        assert.ok(events.some((e) => e.action === 'signing_key.rotated' && e.actor_id === 'rotation'));
      } finally {
        await second?.close();
      }
    });

    it('a pre-published key retired before it signs: the current key goes on signing and a later rotation plans another', async () => {
      const change = await t.service.services.signingKeys.rotate({ kind: 'operator', id: 'test' }).catch(async () => {
        // a successor is planned already (the automatic rotation above): use it
        const pending = (await t.service.services.signingKeys.list()).find((k) => k.state === 'pending')!;
        return { signing: '', next: { kid: pending.kid, signsFrom: pending.signsFrom } };
      });
      const pendingKid = change.next!.kid;
      const after = await t.service.services.signingKeys.retire({ kind: 'operator', id: 'test' }, pendingKid);
      assert.equal(after.next, undefined);
      t.clock.advance(30 * DAY);
      assert.equal(kidOf(await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET)), after.signing, 'still the same signer');
      const again = await t.service.services.signingKeys.rotate({ kind: 'operator', id: 'test' });
      assert.ok(again.next && again.next.kid !== pendingKid);
      await assert.rejects(t.service.services.signingKeys.retire({ kind: 'operator', id: 'test' }, pendingKid), /was retired already/);
      await assert.rejects(
        t.service.services.signingKeys.retire({ kind: 'operator', id: 'test' }, 'no-such-kid'),
        /no signing key has the id no-such-kid/,
      );
    });

    it('retiring the signer: a pre-published successor signs at once (caches hold it); without one a new key does, which a stale cache must fetch', async () => {
      const signerKid = async () => (await t.service.services.signingKeys.list()).find((k) => k.state === 'signing')!.kid;
      const retire = async (kid: string) => t.service.services.signingKeys.retire({ kind: 'operator', id: 'test' }, kid);
      const options = () => ({ issuer: TEST_BASE_URL, audience: TEST_BASE_URL, currentDate: t.clock.now() });
      // a successor is pending (the rotation of the test above): a cache taken now holds it
      const cached = createLocalJWKSet(await t.service.services.keys.jwks());
      const pending = (await t.service.services.signingKeys.list()).find((k) => k.state === 'pending')!.kid;
      const first = await retire(await signerKid());
      assert.equal(first.signing, pending, 'the pre-published successor signs at once');
      const token = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      assert.equal(kidOf(token), pending);
      await jwtVerify(token, cached, options());

      // no successor now: retiring the signer makes a new key, which signs at once
      const second = await retire(pending);
      assert.equal(second.created?.kid, second.signing);
      const fresh = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      assert.equal(kidOf(fresh), second.signing);
      await assert.rejects(jwtVerify(fresh, cached, options()), 'a cache taken before does not know it');
      await jwtVerify(fresh, createLocalJWKSet(await t.service.services.keys.jwks()), options());
      assert.equal((await t.gql(fresh, LIST_CLIENTS)).status, 200);
    });
  });
}
