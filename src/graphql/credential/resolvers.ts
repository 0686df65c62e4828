// Thin resolvers: take the arguments, call one service method, map field names.
import type { RoleAssignment } from '../../access/principal.js';
import { roleName } from '../../access/roles.js';
import type { Client, ClientSecretInfo } from '../../credentials/model.js';
import type { ClientWithSecret } from '../../credentials/service.js';
import { renamed, type Resolvers } from '../build-schema.js';
import type { GraphQLContext } from '../context.js';
import { TimeScalar } from '../scalars.js';

type Args = Record<string, any>;

export const credentialResolvers: Resolvers = {
  Time: TimeScalar,
  Query: {
    clients: (_: unknown, args: Args, ctx: GraphQLContext) => ctx.services.credentials.listClients(ctx.caller, args),
  },
  Mutation: {
    createClient: (_: unknown, args: Args, ctx: GraphQLContext) =>
      ctx.services.credentials.createClient(ctx.caller, { name: args.name, roles: args.roles }),
    rotateClientSecret: (_: unknown, args: Args, ctx: GraphQLContext) =>
      ctx.services.credentials.rotateClientSecret(ctx.caller, {
        id: args.id,
        secret: args.secret,
        gracePeriodSeconds: args.gracePeriodSeconds,
      }),
    forceRotateClientSecret: (_: unknown, args: Args, ctx: GraphQLContext) =>
      ctx.services.credentials.forceRotateClientSecret(ctx.caller, { id: args.id }),
    deleteClient: (_: unknown, args: Args, ctx: GraphQLContext) => ctx.services.credentials.deleteClient(ctx.caller, { id: args.id }),
  },
  ClientWithSecret: renamed<ClientWithSecret>({ client: 'client', client_secret: 'clientSecret' }),
  Client: {
    ...renamed<Client>({
      client_id: 'clientId',
      tenant_id: 'tenantId',
      role_assignments: 'roleAssignments',
      created_at: 'createdAt',
      updated_at: 'updatedAt',
      created_by: 'createdBy',
      updated_by: 'updatedBy',
      last_used_at: 'lastUsedAt',
      revoked_at: 'revokedAt',
    }),
    roles: (c: Client) => c.roleAssignments.map((a) => roleName(a.roleId) ?? a.roleId),
  },
  RoleAssignment: {
    ...renamed<RoleAssignment>({ tenant_id: 'tenantId', role_id: 'roleId', expires_at: 'expiresAt' }),
    role_name: (a: RoleAssignment) => roleName(a.roleId) ?? 'Unknown',
  },
  ClientSecret: renamed<ClientSecretInfo>({ created_at: 'createdAt', expires_at: 'expiresAt', last_used_at: 'lastUsedAt' }),
};
