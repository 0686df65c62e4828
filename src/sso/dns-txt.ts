// The TXT lookup that proves SSO domains (docs/sso.md, "Domains proven by DNS"): Node's resolver,
// asking the servers of GATEHOUSE_DNS_SERVERS (the system's when unset), with a short timeout.
// Every failure is a sentence for the administrator that names the record and what DNS answered;
// nothing of what a server sent back beyond that is repeated.
import { Resolver } from 'node:dns/promises';
import type { TxtAnswer } from './domain-proof.js';

export type TxtLookup = (name: string) => Promise<TxtAnswer>;

/** How long the first query waits for an answer, and how many times it is sent (each try waits
 *  twice as long as the one before: 2 + 4 s in all). */
const TIMEOUT_MS = 2_000;
const TRIES = 2;
const GIVES_UP_AFTER_S = (TIMEOUT_MS * (2 ** TRIES - 1)) / 1000;

/** A lookup through these servers (IP[:port], as GATEHOUSE_DNS_SERVERS gives them), or the system's. */
export function dnsTxtLookup(servers: readonly string[] | null): TxtLookup {
  return async (name) => {
    const resolver = new Resolver({ timeout: TIMEOUT_MS, tries: TRIES });
    if (servers && servers.length > 0) resolver.setServers([...servers]);
    try {
      const records = await resolver.resolveTxt(name);
      // a TXT record is a list of strings of at most 255 bytes: one value split in chunks is joined
      return { kind: 'found', values: records.map((chunks) => chunks.join('')) };
    } catch (err) {
      return { kind: 'failed', reason: lookupFailure(name, (err as { code?: string }).code) };
    }
  };
}

/** The administrator's words for a resolver error code. */
export function lookupFailure(name: string, code: string | undefined): string {
  switch (code) {
    case 'ENOTFOUND':
      return `${name} does not exist in DNS (NXDOMAIN): publish the TXT record, then check again (new records can take a while to reach every DNS server)`;
    case 'ENODATA':
      return `${name} exists but has no TXT record: publish the TXT record there (type TXT, not CNAME), then check again`;
    case 'ESERVFAIL':
      return `the DNS servers failed to answer for ${name} (SERVFAIL): the domain's DNS (or its DNSSEC) is broken; try again later or ask whoever runs the domain's DNS`;
    case 'ETIMEOUT':
      return `no DNS answer for ${name} within ${GIVES_UP_AFTER_S} s: the domain's DNS servers did not answer; try again later`;
    case 'EREFUSED':
      return `the DNS server refused the query for ${name} (REFUSED); try again later`;
    case 'ECONNREFUSED':
      return `the DNS server could not be reached to look ${name} up; try again later`;
    default:
      return `${name} could not be looked up in DNS (${code ?? 'unknown error'}); try again later`;
  }
}
