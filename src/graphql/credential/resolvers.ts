// Thin resolvers: take the arguments, call one service method, map field names. Typed by the
// resolver types generated from schema.graphql (`npm run codegen`): a field or argument renamed
// in the SDL and not here fails to compile.
import { roleCatalog } from '../../access/grants.js';
import type { RoleAssignment } from '../../access/principal.js';
import { ROLE_IDS, roleName } from '../../access/roles.js';
import type { ClientQuery } from '../../credentials/service.js';
import { setupPending } from '../../users/model.js';
import type { Matches, SameFields } from '../input-fields.js';
import { TimeScalar } from '../scalars.js';
import type { QueryClientsArgs, Resolvers } from './resolvers-types.generated.js';

export const credentialResolvers: Resolvers = {
  Time: TimeScalar,
  Query: {
    clients: (_, args, ctx) => ctx.services.credentials.listClients(ctx.caller, args),
    users: (_, args, ctx) => ctx.services.users.list(ctx.caller, { email: args.email, page: args.page, perPage: args.perPage }),
    user: (_, args, ctx) => ctx.services.users.get(ctx.caller, args.id),
    me: (_, __, ctx) => ctx.services.users.identity(ctx.caller),
    roles: (_, __, ctx) => roleCatalog(ctx.caller, ctx.services.clock.now()),
  },
  Mutation: {
    createClient: (_, args, ctx) => ctx.services.credentials.createClient(ctx.caller, { name: args.name, roles: args.roles }),
    rotateClientSecret: (_, args, ctx) =>
      ctx.services.credentials.rotateClientSecret(ctx.caller, {
        id: args.id,
        secret: args.secret,
        gracePeriodSeconds: args.gracePeriodSeconds,
      }),
    forceRotateClientSecret: (_, args, ctx) => ctx.services.credentials.forceRotateClientSecret(ctx.caller, { id: args.id }),
    deleteClient: (_, args, ctx) => ctx.services.credentials.deleteClient(ctx.caller, { id: args.id }),
    createUser: (_, args, ctx) => ctx.services.users.create(ctx.caller, { email: args.email, displayName: args.display_name, roles: args.roles }),
    assignUserRole: (_, args, ctx) =>
      ctx.services.users.assignRole(ctx.caller, { userId: args.user_id, roleId: args.role_id, expiresAt: args.expires_at }),
    removeUserRole: (_, args, ctx) => ctx.services.users.removeRole(ctx.caller, { userId: args.user_id, assignmentId: args.assignment_id }),
    disableUser: (_, args, ctx) => ctx.services.users.setDisabled(ctx.caller, args.id, true),
    enableUser: (_, args, ctx) => ctx.services.users.setDisabled(ctx.caller, args.id, false),
    resetUserSignIn: (_, args, ctx) => ctx.services.users.resetSignIn(ctx.caller, args.id),
    unlockUserSignIn: (_, args, ctx) => ctx.services.users.unlockSignIn(ctx.caller, args.id),
    deleteUser: (_, args, ctx) => ctx.services.users.delete(ctx.caller, args.id),
  },
  Identity: {
    kind: (i) => i.principal.kind,
    id: (i) => i.principal.id,
    tenant_id: (i) => i.principal.tenantId,
    client_id: (i) => i.principal.clientId ?? null,
    email: (i) => i.user?.email ?? null,
    display_name: (i) => i.user?.displayName ?? null,
    roles: (i) => liveRoleNames(i.principal.assignments, i.now),
    role_assignments: (i) => i.principal.assignments.filter((a) => a.expiresAt === null || a.expiresAt > i.now),
  },
  UserWithSetupLink: {
    user: (r) => r.user,
    setup_url: (r) => r.setupUrl,
    setup_link_mailed: (r) => r.mailed,
    setup_expires_at: (r) => r.setupExpiresAt,
  },
  User: {
    display_name: (u) => u.displayName,
    tenant_id: (u) => u.tenantId,
    roles: (u, _, ctx) => liveRoleNames(u.roleAssignments, ctx.services.clock.now()),
    role_assignments: (u) => u.roleAssignments,
    setup_pending: (u) => setupPending(u),
    setup_expires_at: (u) => u.setupExpiresAt,
    mfa_enrolled: (u) => u.totpEnrolled,
    sso: (u) => u.ssoSignIn,
    email_verified: (u) => u.emailStatus === 'verified',
    email_status: (u) => u.emailStatus,
    created_at: (u) => u.createdAt,
    updated_at: (u) => u.updatedAt,
    created_by: (u) => u.createdBy,
    updated_by: (u) => u.updatedBy,
    disabled_at: (u) => u.disabledAt,
    last_sign_in_at: (u) => u.lastSignInAt,
  },
  ClientWithSecret: {
    client: (s) => s.client,
    client_secret: (s) => s.clientSecret,
  },
  Client: {
    client_id: (c) => c.clientId,
    tenant_id: (c) => c.tenantId,
    role_assignments: (c) => c.roleAssignments,
    created_at: (c) => c.createdAt,
    updated_at: (c) => c.updatedAt,
    created_by: (c) => c.createdBy,
    updated_by: (c) => c.updatedBy,
    last_used_at: (c) => c.lastUsedAt,
    revoked_at: (c) => c.revokedAt,
    roles: (c) => c.roleAssignments.map((a) => roleName(a.roleId) ?? a.roleId),
  },
  RoleAssignment: {
    tenant_id: (a) => a.tenantId,
    role_id: (a) => a.roleId,
    expires_at: (a) => a.expiresAt,
    role_name: (a) => roleName(a.roleId) ?? 'Unknown',
  },
  Role: {
    vendor_only: (r) => r.vendorOnly,
  },
  ClientSecret: {
    created_at: (s) => s.createdAt,
    expires_at: (s) => s.expiresAt,
    last_used_at: (s) => s.lastUsedAt,
  },
};

const ROLE_ORDER = Object.keys(ROLE_IDS);

/** Names of the roles held through unexpired assignments, each once, in the order of the role table. */
function liveRoleNames(assignments: RoleAssignment[], now: Date): string[] {
  const live = assignments.filter((a) => a.expiresAt === null || a.expiresAt > now);
  const names = [...new Set(live.map((a) => roleName(a.roleId) ?? a.roleId))];
  return names.sort((a, b) => ROLE_ORDER.indexOf(a) - ROLE_ORDER.indexOf(b));
}

/** `clients` hands its arguments to the service whole: they must name the fields ClientQuery names. */
export type WholeInputs = [Matches<SameFields<QueryClientsArgs, ClientQuery>>];
