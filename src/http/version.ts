// GET /assets/version, /auth/version, /public/version: {tag, revision, timestamp}, Bearer token
// required (routes.ts registers them, with JSON errors).
import type { VersionInfo } from '../version.js';

export const VERSION_PATHS = ['/assets/version', '/auth/version', '/public/version'];

/** The handler of every version path. */
export function version(info: VersionInfo) {
  return async () => info;
}
