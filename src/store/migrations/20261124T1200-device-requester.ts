// The address a device login was started from, shown on the approval page so that a person can
// tell their own request from someone else's (RFC 8628 section 5.4, remote phishing). Codes
// started before this migration have none. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const deviceRequester: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table device_authorizations add column requested_from text`.execute(db);
  },
};
