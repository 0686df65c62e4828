// When an issued access token stops working, for display and for not offering a token known to be
// expired: the token answer's expires_in when the server gives one, else the `exp` claim of a JWT
// (read, not verified: the server verifies its own tokens), else unknown (the server decides).

/** The expiry time, or undefined when neither the answer nor the token says. */
export function tokenExpiry(accessToken: string, expiresIn: unknown, now: number): Date | undefined {
  if (typeof expiresIn === 'number' && expiresIn >= 0) return validDate(now + expiresIn * 1000);
  const exp = jwtClaims(accessToken)?.exp;
  return typeof exp === 'number' && exp > 0 ? validDate(exp * 1000) : undefined;
}

/** A time a Date can hold (an absurd number from the server is no expiry, not a crash). */
function validDate(ms: number): Date | undefined {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function jwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
