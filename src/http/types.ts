// What the request-scoped plugins attach to a Fastify request, and what a route's config may say.
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

  interface FastifyContextConfig {
    /** the OAuth endpoint a route is (http/oauth/scope.ts): the log names it when it fails, and
     *  the token endpoint's errors are counted */
    oauthEndpoint?: 'token endpoint' | 'device authorization' | 'introspection endpoint' | 'revocation endpoint';
  }
}
