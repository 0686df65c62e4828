// What the request-scoped plugins attach to a Fastify request.
import type { Caller, Principal } from '../access/principal.js';
import type { GraphQLMediaType } from './graphql-media-type.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** set by the bearer-auth plugin */
    principal?: Principal;
    /** set by the tenant-context plugin */
    caller?: Caller;
    /** set on the GraphQL routes: the media type the response is sent as */
    graphqlMediaType?: GraphQLMediaType;
  }
}
