// CredentialStore on Kysely (both engines).
import { sql, type Kysely } from 'kysely';
import type { RoleAssignment } from '../access/principal.js';
import type { Clock } from '../clock.js';
import type { Client, ClientSecretInfo } from '../credentials/model.js';
import type { AuthClient, ClientFilter, CredentialStore, SecretDigest } from '../credentials/store.js';
import { UUID_PATTERN } from '../ids.js';
import { rethrowUnique } from './errors.js';
import { insertRoleAssignments } from './role-assignments.js';
import type { Database } from './schema.js';

const USES_PER_STATEMENT = 1000;

export function credentialStore(db: Kysely<Database>, clock: Clock): CredentialStore {
  async function hydrate(
    rows: {
      id: string;
      tenant_id: string;
      client_id: string;
      name: string;
      environment: string;
      created_at: Date;
      updated_at: Date;
      created_by: string | null;
      updated_by: string | null;
      revoked_at: Date | null;
    }[],
  ): Promise<Client[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const [assignments, secrets] = await Promise.all([
      db
        .selectFrom('role_assignments')
        .select(['id', 'tenant_id', 'principal_id', 'role_id', 'expires_at'])
        .where('principal_kind', '=', 'client')
        .where('principal_id', 'in', ids)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
      db
        .selectFrom('client_secrets')
        .select(['id', 'client_id', 'hint', 'created_at', 'expires_at', 'revoked_at', 'last_used_at'])
        .where('client_id', 'in', ids)
        .orderBy('created_at')
        .execute(),
    ]);
    const now = clock.now();
    return rows.map((r) => {
      const own = secrets.filter((s) => s.client_id === r.id);
      let lastUsedAt: Date | null = null;
      for (const s of own) if (s.last_used_at && (!lastUsedAt || s.last_used_at > lastUsedAt)) lastUsedAt = s.last_used_at;
      return {
        id: r.id,
        tenantId: String(r.tenant_id),
        clientId: r.client_id,
        name: r.name,
        environment: r.environment,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        createdBy: r.created_by,
        updatedBy: r.updated_by,
        revokedAt: r.revoked_at,
        lastUsedAt,
        roleAssignments: assignments
          .filter((a) => a.principal_id === r.id)
          .map((a): RoleAssignment => ({ id: a.id, tenantId: String(a.tenant_id), roleId: a.role_id, expiresAt: a.expires_at })),
        secrets: own
          .filter((s) => r.revoked_at === null && s.revoked_at === null && (s.expires_at === null || s.expires_at > now))
          .map(
            (s): ClientSecretInfo => ({
              id: s.id,
              hint: s.hint,
              createdAt: s.created_at,
              expiresAt: s.expires_at,
              revokedAt: s.revoked_at,
              lastUsedAt: s.last_used_at,
            }),
          ),
      };
    });
  }

  const clientColumns = [
    'id',
    'tenant_id',
    'client_id',
    'name',
    'environment',
    'created_at',
    'updated_at',
    'created_by',
    'updated_by',
    'revoked_at',
  ] as const;

  return {
    async lockTenantForCreation(tenantId) {
      await db.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().execute();
    },

    async countCreationsSince(tenantId, since) {
      const row = await db
        .selectFrom('client_creations')
        .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('created_at').as('oldest')])
        .where('tenant_id', '=', tenantId)
        .where('created_at', '>', since)
        .executeTakeFirstOrThrow();
      return { count: Number(row.count), oldest: (row.oldest as Date | null) ?? null };
    },

    async insertClient(c) {
      await db
        .insertInto('clients')
        .values({
          id: c.id,
          tenant_id: c.tenantId,
          client_id: c.clientId,
          name: c.name,
          name_normalized: c.nameNormalized,
          environment: c.environment,
          created_at: c.createdAt,
          updated_at: c.createdAt,
          created_by: c.createdBy,
          updated_by: c.createdBy,
        })
        .execute()
        .catch(rethrowUnique);
    },

    async recordCreation(tenantId, clientId, at) {
      await db.insertInto('client_creations').values({ tenant_id: tenantId, client_id: clientId, created_at: at }).execute();
    },

    async insertSecret(s) {
      await db
        .insertInto('client_secrets')
        .values({
          id: s.id,
          client_id: s.clientId,
          tenant_id: s.tenantId,
          secret_hash: s.hash,
          hint: s.hint,
          created_at: s.createdAt,
        })
        .execute();
    },

    insertRoleAssignments: (assignments) => insertRoleAssignments(db, 'client', assignments),

    async findClient(tenantId, ref, forUpdate = false) {
      let q = db.selectFrom('clients').select(clientColumns).where('tenant_id', '=', tenantId).where('revoked_at', 'is', null);
      q = 'id' in ref ? q.where('id', '=', ref.id) : q.where('client_id', '=', ref.clientId);
      if (forUpdate) q = q.forUpdate();
      const row = await q.executeTakeFirst();
      return row ? (await hydrate([row]))[0] : undefined;
    },

    async getClient(id) {
      const row = await db.selectFrom('clients').select(clientColumns).where('id', '=', id).executeTakeFirstOrThrow();
      return (await hydrate([row]))[0]!;
    },

    async listClients(f: ClientFilter) {
      if (f.tenantIds.length === 0) return [];
      let q = db.selectFrom('clients').select(clientColumns).where('tenant_id', 'in', f.tenantIds);
      q = q.where('revoked_at', 'is', null);
      if (f.name !== undefined) q = q.where('name_normalized', f.name.wildcard ? 'like' : '=', f.name.pattern);
      if (f.clientIds !== undefined) {
        // only well-formed UUIDs reach the uuid column (anything else would fail the cast)
        const uuids = f.clientIds.filter((v) => UUID_PATTERN.test(v)).map((v) => v.toLowerCase());
        q = q.where((eb) =>
          eb.or([eb('client_id', 'in', f.clientIds!.length ? f.clientIds! : ['']), ...(uuids.length ? [eb('id', 'in', uuids)] : [])]),
        );
      }
      if (f.roleIds !== undefined) {
        const roleIds = f.roleIds;
        q = q.where((eb) =>
          eb.exists(
            eb
              .selectFrom('role_assignments as ra')
              .select('ra.id')
              .whereRef('ra.principal_id', '=', 'clients.id')
              .where('ra.role_id', 'in', roleIds.length ? roleIds : ['00000000-0000-0000-0000-000000000000']),
          ),
        );
      }
      const rows = await q.orderBy('created_at').orderBy('id').offset(f.offset).limit(f.limit).execute();
      return hydrate(rows);
    },

    async findAuthClient(clientId) {
      // one round trip whether or not the client exists, so timing does not tell
      const rows = await db
        .selectFrom('clients as c')
        .leftJoin('client_secrets as s', (j) => j.onRef('s.client_id', '=', 'c.id').on('s.revoked_at', 'is', null))
        .select(['c.id', 'c.tenant_id', 'c.client_id', 'c.environment', 's.id as secret_id', 's.secret_hash', 's.expires_at', 's.revoked_at'])
        .innerJoin('tenants as t', 't.id', 'c.tenant_id')
        .where('c.client_id', '=', clientId)
        .where('c.revoked_at', 'is', null)
        // a disabled tenant's clients obtain no tokens
        .where('t.enabled', '=', true)
        .execute();
      const first = rows[0];
      if (!first) return undefined;
      const result: AuthClient = {
        id: first.id,
        tenantId: String(first.tenant_id),
        clientId: first.client_id,
        environment: first.environment,
        secrets: rows
          .filter((r) => r.secret_id !== null && r.secret_hash !== null)
          .map((r) => toDigest({ id: r.secret_id!, secret_hash: r.secret_hash!, expires_at: r.expires_at, revoked_at: r.revoked_at })),
      };
      return result;
    },

    async findLiveSecrets(clientUuid, now) {
      const rows = await db
        .selectFrom('client_secrets')
        .select(['id', 'secret_hash', 'expires_at', 'revoked_at'])
        .where('client_id', '=', clientUuid)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .orderBy('created_at')
        .execute();
      return rows.map(toDigest);
    },

    async expireSecret(secretId, at) {
      await db.updateTable('client_secrets').set({ expires_at: at }).where('id', '=', secretId).execute();
    },

    async revokeSecrets(clientUuid, at) {
      await db.updateTable('client_secrets').set({ revoked_at: at }).where('client_id', '=', clientUuid).where('revoked_at', 'is', null).execute();
    },

    async touchClient(id, at, by) {
      await db.updateTable('clients').set({ updated_at: at, updated_by: by }).where('id', '=', id).execute();
    },

    async revokeClient(id, at, by) {
      await db.updateTable('clients').set({ revoked_at: at, revoked_by: by, updated_at: at, updated_by: by }).where('id', '=', id).execute();
    },

    async recordSecretUse(uses) {
      // one statement per batch of a flush (two bind parameters a use; PostgreSQL takes 65535);
      // several uses of one secret count as its latest (an UPDATE … FROM applies one matching row)
      for (let i = 0; i < uses.length; i += USES_PER_STATEMENT) {
        const rows = uses.slice(i, i + USES_PER_STATEMENT).map((u) => sql`(${u.secretId}::uuid, ${u.at}::timestamptz)`);
        await sql`
          update client_secrets as s set last_used_at = greatest(s.last_used_at, v.at)
          from (select id, max(at) as at from (values ${sql.join(rows)}) as u (id, at) group by id) as v
          where s.id = v.id`.execute(db);
      }
    },
  };
}

function toDigest(s: { id: string; secret_hash: Uint8Array; expires_at: Date | null; revoked_at: Date | null }): SecretDigest {
  return { id: s.id, hash: Buffer.from(s.secret_hash), expiresAt: s.expires_at, revokedAt: s.revoked_at };
}
