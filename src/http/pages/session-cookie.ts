// The session cookie: HttpOnly, SameSite=Lax, Path=/; over https `__Host-`-prefixed and Secure
// (the browser then refuses it from any other origin or path), a plain name on http://localhost
// for development.
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface CookieSettings {
  name: string;
  secure: boolean;
}

export function cookieSettings(baseUrl: string): CookieSettings {
  const secure = new URL(baseUrl).protocol === 'https:';
  return { name: secure ? '__Host-gatehouse_session' : 'gatehouse_session', secure };
}

/** The recognised-browser cookie (signin/recognised-browser.ts): as the session cookie, but it
 *  outlives the session (a browser stays recognised after signing out). */
export function browserCookieSettings(baseUrl: string): CookieSettings {
  const secure = new URL(baseUrl).protocol === 'https:';
  return { name: secure ? '__Host-gatehouse_browser' : 'gatehouse_browser', secure };
}

/** The value of the named cookie in the request's Cookie header (the first, if repeated). */
export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function setSessionCookie(reply: FastifyReply, c: CookieSettings, secret: string): void {
  reply.header('set-cookie', `${c.name}=${secret}; Path=/; HttpOnly; SameSite=Lax${c.secure ? '; Secure' : ''}`);
}

export function setBrowserCookie(reply: FastifyReply, c: CookieSettings, secret: string, maxAgeSeconds: number): void {
  reply.header('set-cookie', `${c.name}=${secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${c.secure ? '; Secure' : ''}`);
}

export function clearSessionCookie(reply: FastifyReply, c: CookieSettings): void {
  reply.header('set-cookie', `${c.name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${c.secure ? '; Secure' : ''}`);
}
