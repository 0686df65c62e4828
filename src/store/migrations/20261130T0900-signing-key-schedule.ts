// Signing-key rotation (docs/tokens.md, "Signing keys"): each key says from when it signs
// (signs_from) and, once a successor is planned, until when (signs_until, the successor's
// signs_from); every process derives from these and its clock which key signs, which are
// published and which verify, without a leader. Keys already stored: each signs from its creation
// until the next key's creation, the newest with no end. At most one key that is not retired has
// no end: the unique index makes "exactly one successor" a rule of the database, whatever races.
// Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const signingKeySchedule: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table signing_keys add column signs_from timestamptz`.execute(db);
    await sql`alter table signing_keys add column signs_until timestamptz`.execute(db);
    await sql`update signing_keys set signs_from = created_at`.execute(db);
    await sql`alter table signing_keys alter column signs_from set not null`.execute(db);
    await sql`
      update signing_keys k set signs_until = n.next_from
      from (
        select kid, lead(created_at) over (order by created_at, kid) as next_from
        from signing_keys where retired_at is null
      ) n
      where k.kid = n.kid and n.next_from is not null`.execute(db);
    await sql`create unique index signing_keys_one_open_idx on signing_keys ((true)) where signs_until is null and retired_at is null`.execute(db);
  },
};
