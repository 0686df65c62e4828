// RevokedTokenStore contract (src/oauth/revocation-store.ts), on every engine: a revocation is
// found by its token id, revoking again (also many at once) keeps one row and fails nothing,
// and the purge deletes exactly the revocations of tokens expired before its cut.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { engines } from '../../helpers/engines.js';
import { at, type Contract, fulfilled, HOUR, openContract, RACERS, race, ROOT } from './harness.js';

for (const engine of engines()) {
  describe(`RevokedTokenStore contract (${engine})`, () => {
    let c: Contract;
    before(async () => {
      c = await openContract(engine);
    });
    after(() => c.db.close());

    const rows = async (jti: string) => (await c.db.kysely.selectFrom('revoked_tokens').selectAll().where('jti', '=', jti).execute()).length;

    it('findRevocation answers for a revoked token and for any other', async () => {
      const jti = randomUUID();
      assert.deepEqual(await c.store.revokedTokens.findRevocation(jti), { revoked: false });
      await c.store.revokedTokens.revokeToken(jti, ROOT, at(HOUR));
      assert.deepEqual(await c.store.revokedTokens.findRevocation(jti), { revoked: true });
      assert.deepEqual(await c.store.revokedTokens.findRevocation(randomUUID()), { revoked: false });
    });

    it('revoking one token many times at once keeps one row and fails no request', async () => {
      const jti = randomUUID();
      const results = await race(RACERS, () => c.store.revokedTokens.revokeToken(jti, ROOT, at(HOUR)));
      assert.equal(fulfilled(results).length, RACERS);
      assert.equal(await rows(jti), 1);
    });

    it('deleteExpiredRevocations deletes those expired before the cut, and counts them', async () => {
      const early = randomUUID();
      const onCut = randomUUID();
      const late = randomUUID();
      await c.store.revokedTokens.revokeToken(early, ROOT, at(2 * HOUR - 1));
      await c.store.revokedTokens.revokeToken(onCut, ROOT, at(2 * HOUR));
      await c.store.revokedTokens.revokeToken(late, ROOT, at(3 * HOUR));
      const deleted = await c.store.revokedTokens.deleteExpiredRevocations(at(2 * HOUR));
      assert.ok(deleted >= 1, 'the early one (and any earlier test rows)');
      assert.deepEqual([await rows(early), await rows(onCut), await rows(late)], [0, 1, 1]);
      assert.deepEqual(await c.store.revokedTokens.findRevocation(onCut), { revoked: true });
    });

    it('a purge with nothing expired signals no change (the caches of every process stay)', async () => {
      await c.store.revokedTokens.deleteExpiredRevocations(at(2 * HOUR));
      const before = c.db.changes.generation;
      assert.equal(await c.store.revokedTokens.deleteExpiredRevocations(at(2 * HOUR)), 0);
      assert.equal(c.db.changes.generation, before);
      // and one that deletes does
      await c.store.revokedTokens.revokeToken(randomUUID(), ROOT, at(1));
      const written = c.db.changes.generation;
      assert.equal(await c.store.revokedTokens.deleteExpiredRevocations(at(2 * HOUR)), 1);
      assert.ok(c.db.changes.generation > written);
    });
  });
}
