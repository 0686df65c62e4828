// What every family of pages (sign-in, device, SSO, console) gets from the pages' scope
// (page-scope.ts): the services, the page shell with its headers, the sessions of its forms, and
// the one way a browser flow's refusal (errors.ts, Refusal) is shown.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Refusal } from '../../errors.js';
import type { Session } from '../../sessions/model.js';
import type { Services } from '../../services.js';
import type { Attempt } from '../../signin/service.js';
import { html, type Html, type PageOptions } from './html.js';
import type { CookieSettings } from './session-cookie.js';

export interface PageKit {
  services: Services;
  /** the service's name, as the pages show it */
  vendor: string;
  /** the session cookie and the recognised-browser cookie (session-cookie.ts) */
  cookie: CookieSettings;
  browserCookie: CookieSettings;
  /** Sends a page; one that loads scripts gets the CSP that allows this service's scripts. */
  send(reply: FastifyReply, status: number, title: string, body: Html, opts?: PageOptions): FastifyReply;
  sessionOf(req: FastifyRequest): Promise<Session | undefined>;
  /** The anonymous session of a sign-in: the browser's own (`found`, its session as the
   *  request's handler read it), or a new one (its cookie set). */
  anonymous(reply: FastifyReply, found: Session | undefined, returnTo?: string): Promise<Session>;
  /** The session a form was posted in, if its CSRF token is the session's; else the 403 was sent. */
  formSession(req: FastifyRequest, reply: FastifyReply): Promise<Session | undefined>;
  /** Who makes a sign-in attempt: the address, and the browser's recognition cookie. */
  attemptOf(req: FastifyRequest): Attempt;
  /** Readies the answer to a refusal: its Retry-After, and its reason, if any, in the log as
   *  "<flow> refused". The caller shows the words with the refusal's status (`refusalPage`, or a
   *  form shown again). */
  noteRefusal(reply: FastifyReply, refused: Refusal, flow?: string): void;
  /** A refusal on a page of its own: its words under `title`, then `more` (the way on). */
  refusalPage(reply: FastifyReply, refused: Refusal, page: { title: string; more?: Html; flow?: string }): FastifyReply;
}

/** A posted form: the first value of each field (form-encoded, parsed in page-scope.ts). */
export type Form = Record<string, string>;

/** The hidden field that carries the session's CSRF token in every form. */
export const csrfField = (s: Session): Html => html`<input type="hidden" name="_csrf" value="${s.csrfToken}">`;
