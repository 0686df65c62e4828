// What the caches of store/index.ts (read-cache.ts) depend on, and the signal that tells them the
// data changed. A change is a write that could alter what a cached read returns: who may
// authenticate (clients, secrets, users, the tenant's enabled flag and token cut-off), which
// roles they hold, where a tenant sits (path, support access), the signing keys, and the client
// listings (any write to a client or its secrets).
//
// The same list is kept twice, by necessity: here, for the writes of this process (write-watch.ts
// sees them as they happen), and in the triggers of migrations 20261126T0900-auth-changes,
// 20261128T0900-listing-changes and 20261130T1000-revoked-tokens, for the writes of every process on one PostgreSQL
// (change-listener.ts hears them). A test compares the two (test/store/auth-changes.test.ts).

/** Per table: the columns whose update is a change ('*': any update), and whether an insert is. */
export const AUTH_TABLES: Readonly<Record<string, { updates: readonly string[] | '*'; inserts: boolean }>> = {
  // every column of a client and its secrets is shown by the cached listings (the `clients`
  // query), a secret's last use included, and a new client joins them (and voids its client_id
  // remembered as unknown by the token endpoint's cache)
  clients: { updates: '*', inserts: true },
  client_secrets: { updates: '*', inserts: true },
  // a new user or tenant is in no cache (only the client cache keeps misses, and a new client is
  // a change): its insert changes nothing
  users: { updates: ['id', 'tenant_id', 'disabled_at', 'tokens_valid_after'], inserts: false },
  tenants: {
    updates: ['id', 'parent_id', 'path', 'enabled', 'tokens_valid_after', 'support_enabled', 'support_expires_at'],
    inserts: false,
  },
  role_assignments: { updates: '*', inserts: true },
  signing_keys: { updates: '*', inserts: true },
  // a revoked token (RFC 7009) ends at once: its cached "not revoked" is void
  revoked_tokens: { updates: '*', inserts: true },
};

/** The NOTIFY channel; the payload is the schema written to, so deployments sharing a database ignore each other. */
export const AUTH_CHANGES_CHANNEL = 'gatehouse_auth_changes';

/**
 * A counter of changes. A cache entry remembers the generation it was read at and is good only
 * while the generation is unchanged; `reliable` is false while changes made by other processes
 * could go unheard (the listening connection is down), and then nothing is cached.
 */
export class ChangeSignal {
  private gen = 0;
  private heard = true;

  get generation(): number {
    return this.gen;
  }

  get reliable(): boolean {
    return this.heard;
  }

  /** Something changed: every entry read before now is void. */
  bump(): void {
    this.gen++;
  }

  /** Whether changes of other processes are being heard; either way every entry so far is void. */
  setReliable(heard: boolean): void {
    this.heard = heard;
    this.bump();
  }
}
