// "A refused request wrote nothing", read cheaply: a trigger of the test's own counts every row
// inserted, updated or deleted in the tables a change can write (WRITTEN_TABLES but the audit
// trail), so that a snapshot is one small read instead of a digest of every row of every table
// (that digest cost the two authorization matrices about 12 CPU-seconds each, and grew with
// every case). It is stricter than a digest, too: an update that writes a row back as it was
// counts. The audit trail is compared by counts instead, since a refusal writes its own event.
import { sql, type Kysely } from 'kysely';
import { WRITTEN_TABLES } from './seed.js';

const COUNTED = WRITTEN_TABLES.filter((table) => table !== 'audit_events');

/** Installs the counting triggers in the test app's database (its own schema on PostgreSQL);
 *  once per database, before the snapshots. */
export async function countRowWrites(db: Kysely<any>): Promise<void> {
  await sql`create table if not exists test_row_writes (tbl text primary key, n bigint not null)`.execute(db);
  await sql`
    create or replace function test_count_row_write() returns trigger language plpgsql as $$
    begin
      insert into test_row_writes (tbl, n) values (tg_table_name, 1)
        on conflict (tbl) do update set n = test_row_writes.n + 1;
      return null;
    end $$`.execute(db);
  for (const table of COUNTED) {
    await sql`drop trigger if exists test_count_row_write on ${sql.table(table)}`.execute(db);
    await sql`create trigger test_count_row_write after insert or update or delete on ${sql.table(table)}
      for each row execute function test_count_row_write()`.execute(db);
  }
}

/** What has been written so far: rows written per table (counted by countRowWrites' triggers),
 *  the audit events but refusals and Support staff's visits (`audit_events`: a visit is recorded
 *  for every staff request, refused or not) and the refusals' own events (`refused`).
 *  Equal before and after a request, but for its refusal event: it wrote nothing. */
export async function rowWrites(db: Kysely<any>): Promise<Record<string, number>> {
  const { rows } = await sql<{ tbl: string; n: string | number }>`
    select tbl, n from test_row_writes
    union all select 'audit_events', count(*) from audit_events where action not in ('authorization.refused', 'support.accessed')
    union all select 'refused', count(*) from audit_events where action = 'authorization.refused'`.execute(db);
  const out: Record<string, number> = Object.fromEntries(COUNTED.map((table) => [table, 0]));
  for (const r of rows) out[r.tbl] = Number(r.n);
  return out;
}
