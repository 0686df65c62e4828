// What a family of pages gets from the sign-in pages that register it (sign-in-pages.ts): the
// services, the page shell with its headers, and the session checks of its forms.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session } from '../../sessions/model.js';
import type { Services } from '../../services.js';
import { html, type Html, type PageOptions } from './html.js';

export interface PageKit {
  services: Services;
  /** Sends a page; one that loads scripts gets the CSP that allows this service's scripts. */
  send(reply: FastifyReply, status: number, title: string, body: Html, opts?: PageOptions): FastifyReply;
  sessionOf(req: FastifyRequest): Promise<Session | undefined>;
  anonymous(req: FastifyRequest, reply: FastifyReply, returnTo?: string): Promise<Session>;
  /** The session a form was posted in, if its CSRF token is the session's; else the 403 was sent. */
  formSession(req: FastifyRequest, reply: FastifyReply): Promise<Session | undefined>;
}

/** A posted form: the first value of each field (form-encoded, parsed in sign-in-pages.ts). */
export type Form = Record<string, string>;

/** The hidden field that carries the session's CSRF token in every form. */
export const csrfField = (s: Session): Html => html`<input type="hidden" name="_csrf" value="${s.csrfToken}">`;
