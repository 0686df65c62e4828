// The client listings are cached (src/store/index.ts): the same filter is answered without a
// statement until something changes, and a filter whose key is long (hundreds of client ids) is
// read each time, so that the cache's memory is bounded by what it holds and not by its keys.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { ManualClock } from '../../src/clock.js';
import { ChangeSignal } from '../../src/store/auth-changes.js';
import type { Db } from '../../src/store/db.js';
import { createStore } from '../../src/store/index.js';
import { openTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

/** Counts the statements sent through it. */
class Counter implements KyselyPlugin {
  statements = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements++;
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

for (const engine of engines()) {
  describe(`client listing cache (${engine})`, () => {
    let db: Db;
    before(async () => {
      db = await openTestDb(engine);
    });
    after(async () => {
      await db.close();
    });

    it('answers a filter again without a statement until a change; a long filter is read every time', async () => {
      const counter = new Counter();
      // a signal of its own: on PostgreSQL the database's is heard only once its listener is up
      const changes = new ChangeSignal();
      const store = createStore(db.kysely.withPlugin(counter), new ManualClock(new Date('2026-11-22T10:00:00Z')), {
        changes,
        cacheLifetimeMs: 600_000,
      });
      const short = { tenantIds: ['1'], offset: 0, limit: 10 };
      const statementsOf = async (run: () => Promise<unknown>) => {
        const before = counter.statements;
        await run();
        return counter.statements - before;
      };
      assert.ok((await statementsOf(() => store.credentials.listClients(short))) >= 1);
      assert.equal(await statementsOf(() => store.credentials.listClients(short)), 0, 'served from the cache');
      changes.bump();
      assert.ok((await statementsOf(() => store.credentials.listClients(short))) >= 1, 'read again after a change');

      const long = { ...short, clientIds: Array.from({ length: 100 }, (_, i) => `client-id-${String(i).padStart(24, '0')}`) };
      assert.ok(JSON.stringify(long).length > 2048);
      for (let i = 0; i < 3; i++) assert.ok((await statementsOf(() => store.credentials.listClients(long))) >= 1, `long filter, read ${i + 1}`);
    });
  });
}
