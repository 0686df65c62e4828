// The one-time set-up link of a new (or reset) user: an opaque token (crypto/opaque-token.ts),
// stored only as its digest, valid until it is used or expires. It carries the person to
// /login/setup, where they set a password and enrol TOTP.

/** The link a person opens. The token travels in the query string, which the request log never
 *  records (logger.ts logs paths only). */
export function setupUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/login/setup?token=${token}`;
}

/** The link that confirms a new address of one's own (mailed to it; the account page). */
export function emailConfirmUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/console/account/email/confirm?token=${token}`;
}

/** The password reset link (mailed from /login/forgot): /login/reset, the token as the set-up link's. */
export function resetUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/login/reset?token=${token}`;
}
