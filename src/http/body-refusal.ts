// Fastify's own refusals of a request before any handler ran (a body over the limit, a media type
// no parser reads, a body its parser could not read, another 4xx of Fastify's), sorted here once.
// Each transport words them in its own format: error-handler.ts (JSON and GraphQL),
// oauth/scope.ts (RFC 6749), pages/page-scope.ts (a page).

export interface BodyRefusal {
  /** Fastify's status: 413, 415, 400, or another 4xx */
  status: number;
  kind: 'too_large' | 'media_type' | 'malformed' | 'other';
  /** Fastify's own words (what the 'malformed' and 'other' kinds can say) */
  detail: string;
}

/** The refusal Fastify made, or undefined for anything else (a fault of the server). */
export function bodyRefusal(err: unknown): BodyRefusal | undefined {
  const fe = err as { statusCode?: unknown; code?: unknown; message?: unknown } | undefined;
  if (typeof fe?.statusCode !== 'number' || fe.statusCode < 400 || fe.statusCode >= 500) return undefined;
  const code = typeof fe.code === 'string' ? fe.code : '';
  const kind =
    code === 'FST_ERR_CTP_BODY_TOO_LARGE'
      ? 'too_large'
      : code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'media_type'
        : code.startsWith('FST_ERR_CTP') || fe.statusCode === 400
          ? 'malformed'
          : 'other';
  return { status: fe.statusCode, kind, detail: typeof fe.message === 'string' ? fe.message : '' };
}

/** A body limit as the refusals say it: "1 MiB", "16 KiB", "900 bytes". */
export function sizeInWords(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
