// Which media type a GraphQL response is sent as, from the request's Accept header (GraphQL over
// HTTP, "Accept"): application/graphql-response+json when the client asks for it, otherwise the
// legacy application/json, which is also what a missing Accept or */* gets. The two differ only
// in status codes (graphql-route.ts).

export const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';
export const LEGACY_JSON = 'application/json';
export type GraphQLMediaType = typeof GRAPHQL_RESPONSE_JSON | typeof LEGACY_JSON;

interface Offer {
  type: GraphQLMediaType;
  q: number;
  /** 2 named exactly, 1 by application/*, 0 by *\/* (RFC 9110 12.5.1: the most specific range decides) */
  specificity: number;
  position: number;
}

const SPECIFICITY: Record<string, (type: GraphQLMediaType) => number | undefined> = {
  [GRAPHQL_RESPONSE_JSON]: (t) => (t === GRAPHQL_RESPONSE_JSON ? 2 : undefined),
  [LEGACY_JSON]: (t) => (t === LEGACY_JSON ? 2 : undefined),
  'application/*': () => 1,
  '*/*': () => 0,
};

/** The media type to answer with, or undefined when the Accept header allows neither (406). */
export function negotiateMediaType(accept: string | undefined): GraphQLMediaType | undefined {
  if (accept === undefined || accept.trim() === '') return LEGACY_JSON;
  const best = new Map<GraphQLMediaType, Offer>();
  accept.split(',').forEach((range, position) => {
    const [name = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q) || q < 0 || q > 1) return;
    const match = SPECIFICITY[name];
    if (!match) return;
    for (const type of [GRAPHQL_RESPONSE_JSON, LEGACY_JSON] as const) {
      const specificity = match(type);
      if (specificity === undefined) continue;
      const seen = best.get(type);
      if (!seen || specificity > seen.specificity) best.set(type, { type, q, specificity, position });
    }
  });
  const offers = [...best.values()].filter((o) => o.q > 0);
  if (offers.length === 0) return undefined;
  // highest quality; then a type the client named over one it reached by a wildcard; then the one
  // it listed first; then the legacy type, which every GraphQL client understands
  offers.sort((a, b) => b.q - a.q || b.specificity - a.specificity || a.position - b.position || (a.type === LEGACY_JSON ? -1 : 1));
  return offers[0]!.type;
}
