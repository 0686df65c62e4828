// UserStore on Kysely (both engines).
import type { ExpressionBuilder, Kysely, Selectable, SqlBool } from 'kysely';
import type { RoleAssignment } from '../access/principal.js';
import type { User } from '../users/model.js';
import type { UserStore } from '../users/store.js';
import { NO_PENDING_EMAIL, proveAddress, signInAccountFirst } from './email-proof.js';
import { rethrowUnique } from './errors.js';
import { insertRoleAssignments } from './role-assignments.js';
import type { Database, UsersTable } from './schema.js';

const USER_COLUMNS = [
  'id',
  'tenant_id',
  'email',
  'email_normalized',
  'display_name',
  'password_hash',
  'totp_secret_sealed',
  'setup_expires_at',
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
  'disabled_at',
  'last_sign_in_at',
  'email_verified_at',
  'email_superseded_at',
] as const;

type UserRow = Pick<Selectable<UsersTable>, (typeof USER_COLUMNS)[number]> & { sso: SqlBool };

function toUser(row: UserRow, assignments: RoleAssignment[]): User {
  return {
    id: row.id,
    tenantId: String(row.tenant_id),
    email: row.email,
    emailNormalized: row.email_normalized,
    displayName: row.display_name,
    status: row.disabled_at === null ? 'active' : 'disabled',
    passwordSet: row.password_hash !== null,
    ssoSignIn: Boolean(row.sso),
    totpEnrolled: row.totp_secret_sealed !== null,
    setupExpiresAt: row.setup_expires_at,
    emailStatus: row.email_verified_at !== null ? 'verified' : row.email_superseded_at !== null ? 'claimed_elsewhere' : 'unverified',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    disabledAt: row.disabled_at,
    lastSignInAt: row.last_sign_in_at,
    roleAssignments: assignments,
  };
}

/** whether the user (of the outer query on `users`) has signed in through an SSO connection */
const ssoExists = (eb: ExpressionBuilder<Database, 'users'>) =>
  eb.exists(eb.selectFrom('sso_identities').select('sso_identities.user_id').whereRef('sso_identities.user_id', '=', 'users.id'));

export function userStore(db: Kysely<Database>): UserStore {
  /** the user columns, and whether the user has signed in through an SSO connection */
  const selectUsers = () =>
    db
      .selectFrom('users')
      .select(USER_COLUMNS)
      .select((eb) =>
        eb.exists(eb.selectFrom('sso_identities').select('sso_identities.user_id').whereRef('sso_identities.user_id', '=', 'users.id')).as('sso'),
      );

  /** The accounts with an address that have not given way, the address's sign-in account first
   *  (docs/users.md): the one that proved it, else the oldest. */
  const byAddress = (key: string) => signInAccountFirst(selectUsers().where('email_normalized', '=', key), 'users');

  /** Role assignments of many users in one query, ordered for stable output. */
  async function assignmentsOf(ids: string[]): Promise<Map<string, RoleAssignment[]>> {
    const byUser = new Map<string, RoleAssignment[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return byUser;
    const rows = await db
      .selectFrom('role_assignments')
      .select(['id', 'principal_id', 'tenant_id', 'role_id', 'expires_at'])
      .where('principal_kind', '=', 'user')
      .where('principal_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    for (const r of rows) {
      byUser.get(r.principal_id)?.push({ id: r.id, tenantId: String(r.tenant_id), roleId: r.role_id, expiresAt: r.expires_at });
    }
    return byUser;
  }

  async function withAssignments(rows: UserRow[]): Promise<User[]> {
    const byUser = await assignmentsOf(rows.map((r) => r.id));
    return rows.map((r) => toUser(r, byUser.get(r.id) ?? []));
  }

  async function one(row: UserRow | undefined): Promise<User | undefined> {
    return row === undefined ? undefined : (await withAssignments([row]))[0];
  }

  return {
    async insertUser(u) {
      await db
        .insertInto('users')
        .values({
          id: u.id,
          tenant_id: u.tenantId,
          email: u.email,
          email_normalized: u.emailNormalized,
          display_name: u.displayName,
          password_hash: u.passwordHash,
          setup_token_hash: u.setupTokenHash,
          setup_expires_at: u.setupExpiresAt,
          setup_link_mailed: u.setupLinkMailed ?? false,
          created_at: u.createdAt,
          updated_at: u.createdAt,
          created_by: u.createdBy,
          updated_by: u.createdBy,
        })
        .execute()
        .catch(rethrowUnique);
    },

    insertRoleAssignments: (assignments) => insertRoleAssignments(db, 'user', assignments),

    findUser: async (id) => one(await selectUsers().where('id', '=', id).executeTakeFirst()),

    findUserByEmail: async (key) => one(await byAddress(key).limit(1).executeTakeFirst()),

    findUsersByEmail: async (key) => withAssignments(await byAddress(key).execute()),

    findProvenUser: async (key) =>
      one(await selectUsers().where('email_normalized', '=', key).where('email_verified_at', 'is not', null).executeTakeFirst()),

    async lockTenantUsers(tenantId) {
      await db.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().execute();
    },

    lockUser: async (id) => one(await selectUsers().where('id', '=', id).forUpdate().executeTakeFirst()),

    async listUsers(filter) {
      let q = selectUsers().where('tenant_id', '=', filter.tenantId);
      if (filter.email) {
        q = filter.email.wildcard
          ? q.where('email_normalized', 'like', filter.email.pattern)
          : q.where('email_normalized', '=', filter.email.pattern);
      }
      const { status, sso, role, lastSignIn } = filter;
      if (status === 'disabled') q = q.where('disabled_at', 'is not', null);
      if (status === 'pending' || status === 'active') {
        q = q.where('disabled_at', 'is', null).where((eb) => {
          const pending = eb.and([eb.not(ssoExists(eb)), eb.or([eb('password_hash', 'is', null), eb('totp_secret_sealed', 'is', null)])]);
          return status === 'pending' ? pending : eb.not(pending);
        });
      }
      if (sso !== undefined) q = q.where((eb) => (sso ? ssoExists(eb) : eb.not(ssoExists(eb))));
      if (role) {
        q = q.where((eb) =>
          eb.exists(
            eb
              .selectFrom('role_assignments as ra')
              .select('ra.id')
              .where('ra.principal_kind', '=', 'user')
              .whereRef('ra.principal_id', '=', 'users.id')
              .where('ra.role_id', '=', role.roleId)
              .where((e) => e.or([e('ra.expires_at', 'is', null), e('ra.expires_at', '>', role.now)])),
          ),
        );
      }
      if (lastSignIn && 'never' in lastSignIn) q = q.where('last_sign_in_at', 'is', null);
      if (lastSignIn && 'after' in lastSignIn) q = q.where('last_sign_in_at', '>', lastSignIn.after);
      if (lastSignIn && 'notAfter' in lastSignIn) {
        const { notAfter } = lastSignIn;
        q = q.where((eb) => eb.or([eb('last_sign_in_at', 'is', null), eb('last_sign_in_at', '<=', notAfter)]));
      }
      const rows = await q.orderBy('created_at').orderBy('id').offset(filter.offset).limit(filter.limit).execute();
      return withAssignments(rows);
    },

    async deleteRoleAssignment(userId, assignmentId) {
      const r = await db
        .deleteFrom('role_assignments')
        .where('principal_kind', '=', 'user')
        .where('principal_id', '=', userId)
        .where('id', '=', assignmentId)
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    async setDisabled(id, disabledAt, at, by) {
      await db
        .updateTable('users')
        .set({
          disabled_at: disabledAt,
          updated_at: at,
          updated_by: by,
          // tokens and sessions from before a disabling stay dead after re-enabling, and so does a
          // new address asked for before it
          ...(disabledAt === null ? {} : { tokens_valid_after: disabledAt, ...NO_PENDING_EMAIL }),
        })
        .where('id', '=', id)
        .execute();
    },

    async resetSignIn(id, setupTokenHash, setupExpiresAt, at, by, mailed = false) {
      await db
        .updateTable('users')
        .set({
          setup_link_mailed: mailed,
          password_hash: null,
          totp_secret_sealed: null,
          totp_last_step: null,
          setup_token_hash: setupTokenHash,
          setup_expires_at: setupExpiresAt,
          // a pending password reset link dies with the password, and a new address asked for before
          reset_token_hash: null,
          reset_expires_at: null,
          ...NO_PENDING_EMAIL,
          tokens_valid_after: at,
          updated_at: at,
          updated_by: by,
        })
        .where('id', '=', id)
        .execute();
      await db.deleteFrom('user_recovery_codes').where('user_id', '=', id).execute();
      // a lost authenticator may be a lost passkey too: the person registers theirs again
      await db.deleteFrom('passkeys').where('user_id', '=', id).execute();
      // a reset forgets the browsers that signed in before it (whoever caused the reset may hold one)
      await db.deleteFrom('recognised_browsers').where('user_id', '=', id).execute();
    },

    async findPendingEmail(id) {
      const r = await db
        .selectFrom('users')
        .select(['pending_email', 'pending_email_token_hash', 'pending_email_expires_at', 'pending_email_mailed'])
        .where('id', '=', id)
        .executeTakeFirst();
      if (!r?.pending_email || !r.pending_email_token_hash || !r.pending_email_expires_at) return undefined;
      return {
        email: r.pending_email,
        tokenHash: Buffer.from(r.pending_email_token_hash),
        expiresAt: r.pending_email_expires_at,
        mailed: r.pending_email_mailed,
      };
    },

    async setPendingEmail(id, pending, at) {
      await db
        .updateTable('users')
        .set({
          pending_email: pending?.email ?? null,
          pending_email_token_hash: pending?.tokenHash ?? null,
          pending_email_expires_at: pending?.expiresAt ?? null,
          pending_email_mailed: pending?.mailed ?? false,
          updated_at: at,
        })
        .where('id', '=', id)
        .execute();
    },

    async changeEmail(id, email, key, at) {
      await db
        .updateTable('users')
        .set({
          email,
          email_normalized: key,
          // the old address's proof is not the new one's: proveEmail sets it again
          email_verified_at: null,
          email_superseded_at: null,
          ...NO_PENDING_EMAIL,
          // a reset link mailed to the old address stops working
          reset_token_hash: null,
          reset_expires_at: null,
          updated_at: at,
          updated_by: id,
        })
        .where('id', '=', id)
        .execute()
        .catch(rethrowUnique);
    },

    proveEmail: (id, key, at) => proveAddress(db, id, key, at),

    async deleteUser(id) {
      await db.deleteFrom('role_assignments').where('principal_kind', '=', 'user').where('principal_id', '=', id).execute();
      await db.deleteFrom('users').where('id', '=', id).execute();
    },
  };
}
