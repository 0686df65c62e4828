// Upgrading a database of the release before signing-key rotation (migration
// 20261130T0900-signing-key-schedule): each stored key signs from its creation until the next key
// not retired was created, the newest with no end, so the signer stays the one the release before
// chose (the newest key not retired); retired keys keep their retirement; and from then on a
// second open-ended key not retired is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrateUpTo, openEmptyTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

const BEFORE = '20261129T0900-sign-in-attempts';

for (const engine of engines()) {
  describe(`upgrade to signing-key rotation (${engine})`, () => {
    let db: Db;
    const at = (hour: number) => new Date(Date.UTC(2026, 10, 20, hour));

    before(async () => {
      db = await openEmptyTestDb(engine);
      await migrateUpTo(db, BEFORE);
      const k = db.kysely as any;
      const key = (kid: string, created: Date, retired: Date | null) =>
        k
          .insertInto('signing_keys')
          .values({
            kid,
            alg: 'ES256',
            public_jwk: JSON.stringify({ kty: 'EC' }),
            private_jwk_sealed: 'v2.x',
            created_at: created,
            retired_at: retired,
          })
          .execute();
      await key('oldest', at(1), null);
      await key('retired', at(2), at(3));
      await key('middle', at(4), null);
      await key('newest', at(5), null);
      await migrateToLatest(db.kysely);
    });
    after(() => db.close());

    it('chains the keys not retired by their creation; the newest has no end; a retired key keeps its retirement', async () => {
      const rows = await (db.kysely as any)
        .selectFrom('signing_keys')
        .select(['kid', 'signs_from', 'signs_until', 'retired_at'])
        .orderBy('created_at')
        .execute();
      const ms = (d: Date | null) => (d === null ? null : new Date(d).getTime());
      assert.deepEqual(
        rows.map((r: any) => [r.kid, ms(r.signs_from), ms(r.signs_until), ms(r.retired_at)]),
        [
          ['oldest', ms(at(1)), ms(at(4)), null],
          ['retired', ms(at(2)), null, ms(at(3))],
          ['middle', ms(at(4)), ms(at(5)), null],
          ['newest', ms(at(5)), null, null],
        ],
      );
    });

    it('refuses a second open-ended key not retired', async () => {
      await assert.rejects(
        (db.kysely as any)
          .insertInto('signing_keys')
          .values({ kid: 'another', alg: 'ES256', public_jwk: '{}', private_jwk_sealed: 'v2.y', created_at: at(6), signs_from: at(6) })
          .execute(),
      );
    });
  });
}
