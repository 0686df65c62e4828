// The page authorization matrix's cases (test/authorization/console-matrix.test.ts): one file per
// family of console pages, each case one route (a page or a form) and the row of the GraphQL
// matrix (matrix-table.ts) whose outcomes it must have: a page is allowed to exactly whom the
// operation behind it is allowed, refused to the others, and a refused form writes nothing.
import type { TestApp, Response } from '../../helpers/app.js';

/** The hierarchy of matrix-table.ts (1 > P1 > C1, C2; 1 > P2) and the way to make objects in it. */
export interface PageWorld {
  t: TestApp;
  P1: string;
  C1: string;
  C2: string;
  P2: string;
  /** the vendor root Administrator's bearer token, to make the objects a case needs (GraphQL) */
  rootToken: string;
  /** a name no other case uses */
  unique(prefix: string): string;
  /** GraphQL on the credential (default) or tenant interface as the root Administrator, acting in `tenant`; fails the test on an error */
  gql(doc: string, variables?: Record<string, unknown>, opts?: { tenant?: string; iface?: 'tenant' | 'credential' }): Promise<any>;
}

export type State = Record<string, any>;

export interface PageCase {
  /** the route as Fastify knows it: method and URL pattern, e.g. 'POST /console/credentials/new' */
  route: string;
  /** the row of the GraphQL matrix whose outcome, per actor, the page must have */
  row: string;
  /** what the request needs, made fresh for each actor (as the root Administrator) */
  prepare?(w: PageWorld): Promise<State>;
  /** the request: its path and query; a POST's form fields (the runner adds the session's _csrf) */
  request(w: PageWorld, s: State): { path: string; form?: Record<string, string> };
  /** when allowed: the page shows what it is for (GET), or the change took effect (POST; read back) */
  effect(w: PageWorld, s: State, res: Response): Promise<void>;
  /** C1's support access during the request, when the row needs a particular one (as the
   *  GraphQL matrix's supportC1); else on for the Support columns that consent to it */
  supportC1?(actor: string): boolean;
  /** a list page: whether the target was left out (the row's NOT_FOUND for a list) */
  hidden?(w: PageWorld, s: State, res: Response): boolean;
}
