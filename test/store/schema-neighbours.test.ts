// Several Gatehouse deployments may share one PostgreSQL database, each in a schema of its own
// (`search_path` in GATEHOUSE_DATABASE_URL, or the test helpers' schema per app). Starting one
// must not depend on the others: migrating reads only its own schema, so a neighbour schema
// dropped at that moment cannot fail the start. (Kysely's stock introspector scanned every
// schema of the database and called has_schema_privilege() by name on each, which raised
// `schema "..." does not exist` for a schema dropped mid-scan; CI saw it as a failed start.)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { openDb } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';

const url = process.env.TEST_DATABASE_URL;

describe('one deployment among neighbour schemas (postgres)', { skip: url ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('migrates while neighbour schemas come and go, and sees only its own tables', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const own = `gh_nb_${randomBytes(5).toString('hex')}`;
    await admin.query(`create schema ${own}`);
    // a neighbour with a table of the same name as ours, which must not count as ours
    const twin = `gh_nb_${randomBytes(5).toString('hex')}`;
    await admin.query(`create schema ${twin}`);
    await admin.query(`create table ${twin}.gatehouse_migrations (name varchar(255) primary key, timestamp varchar(255) not null)`);
    await admin.query(`insert into ${twin}.gatehouse_migrations values ('99999999T9999-from-the-future', 'x')`);
    // two neighbours at a time are created with 30 tables each and dropped again, 40 in all
    const CHURN = 40;
    let churned = 0;
    const churn = async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      while (churned < CHURN) {
        const name = `gh_nb_${randomBytes(5).toString('hex')}`;
        const tables = Array.from({ length: 30 }, (_, i) => `create table ${name}.t${i} (id bigserial primary key, v text);`);
        await c.query(`create schema ${name}; ${tables.join(' ')}`);
        await c.query(`drop schema ${name} cascade`);
        churned += 1;
      }
      await c.end();
    };
    const churning = Promise.all([churn(), churn()]);
    try {
      // starts, each migrating and then reading its tables the way the migrator does, for as
      // long as neighbours are being dropped (the old scan failed 6-17 times in such a run)
      let starts = 0;
      while (churned < CHURN || starts < 2) {
        const db = await openDb({ engine: 'postgres', url: url!, schema: own, poolSize: 2 });
        try {
          const applied = await migrateToLatest(db.kysely);
          if (starts === 0) assert.ok(applied.length > 0, 'the first start applies every migration');
          else assert.deepEqual(applied, [], 'a later start applies nothing');
          for (let i = 0; i < 20; i += 1) {
            const tables = await db.kysely.introspection.getTables({ withInternalKyselyTables: true });
            assert.ok(tables.some((t) => t.name === 'tenants'));
            assert.ok(
              tables.every((t) => t.schema === own),
              "only the deployment's own tables are seen",
            );
          }
          const recorded = await sql<{ name: string }>`select name from gatehouse_migrations order by name`.execute(db.kysely);
          assert.ok(!recorded.rows.some((r) => r.name.startsWith('99999999')), "the neighbour's migration table is not ours");
        } finally {
          await db.close();
        }
        starts += 1;
      }
    } finally {
      churned = CHURN;
      await churning.catch(() => {});
      await admin.query(`drop schema if exists ${own} cascade`);
      await admin.query(`drop schema if exists ${twin} cascade`);
      await admin.end();
    }
  });
});
