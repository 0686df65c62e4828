// Thin resolvers: take the arguments, call one service method, map field names. Typed by the
// resolver types generated from schema.graphql (`npm run codegen`): a field or argument renamed
// in the SDL and not here fails to compile.
import { roleName } from '../../access/roles.js';
import type { ClientQuery } from '../../credentials/service.js';
import type { Matches, SameFields } from '../input-fields.js';
import { TimeScalar } from '../scalars.js';
import type { QueryClientsArgs, Resolvers } from './resolvers-types.generated.js';

export const credentialResolvers: Resolvers = {
  Time: TimeScalar,
  Query: {
    clients: (_, args, ctx) => ctx.services.credentials.listClients(ctx.caller, args),
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
  ClientSecret: {
    created_at: (s) => s.createdAt,
    expires_at: (s) => s.expiresAt,
    last_used_at: (s) => s.lastUsedAt,
  },
};

/** `clients` hands its arguments to the service whole: they must name the fields ClientQuery names. */
export type WholeInputs = [Matches<SameFields<QueryClientsArgs, ClientQuery>>];
