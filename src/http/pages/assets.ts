// The pages' own files: the stylesheet every page links to, the copy script of the pages that
// show a secret (copy-script.ts) and the passkey script of the pages with a passkey button
// (passkey-script.ts). Cached for an hour; routes.ts registers them.
import type { FastifyReply } from 'fastify';
import { COPY_SCRIPT } from './copy-script.js';
import { STYLESHEET } from './html.js';
import { PASSKEY_SCRIPT } from './passkey-script.js';

export async function stylesheet(_req: unknown, reply: FastifyReply) {
  return reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET);
}

export async function copyScript(_req: unknown, reply: FastifyReply) {
  return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(COPY_SCRIPT);
}

export async function passkeyScript(_req: unknown, reply: FastifyReply) {
  return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(PASSKEY_SCRIPT);
}
