// A DNS responder on a loopback UDP port, for the tests of SSO domains proven by DNS: it answers
// the TXT records a test sets (each name's records, each record one or more strings), NXDOMAIN
// for any other name, and, for a name a test says so, SERVFAIL or no answer at all (a timeout).
// Point GATEHOUSE_DNS_SERVERS at `address`.
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

export type DnsFailure = 'SERVFAIL' | 'silent';

export interface TestDnsServer {
  /** `127.0.0.1:PORT`, the value of GATEHOUSE_DNS_SERVERS */
  address: string;
  /** the TXT records of a name (each record: one string, or several chunks); replaces what it had */
  setTxt(name: string, records: (string | string[])[]): void;
  /** the name answers as if it did not exist (NXDOMAIN) */
  remove(name: string): void;
  /** the name answers SERVFAIL, or nothing at all (the resolver times out) */
  fail(name: string, how: DnsFailure): void;
  /** every name asked, in order (lower case) */
  asked: string[];
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const records = new Map<string, string[][]>();
  const failures = new Map<string, DnsFailure>();
  const asked: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (msg, from) => {
    let query: packet.DecodedPacket;
    try {
      query = packet.decode(msg);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    asked.push(name);
    const failure = failures.get(name);
    if (failure === 'silent') return;
    const txt = records.get(name);
    const rcode = failure === 'SERVFAIL' ? RCODE.SERVFAIL : txt === undefined ? RCODE.NXDOMAIN : RCODE.NOERROR;
    const answers: packet.Answer[] =
      rcode === RCODE.NOERROR && question.type === 'TXT'
        ? txt!.map((chunks) => ({ type: 'TXT' as const, name: question.name, ttl: 60, class: 'IN' as const, data: chunks }))
        : [];
    const reply = packet.encode({
      type: 'response',
      id: query.id,
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | rcode,
      questions: query.questions,
      answers,
    });
    socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  const key = (name: string) => name.toLowerCase().replace(/\.$/, '');
  return {
    address: `127.0.0.1:${port}`,
    setTxt(name, list) {
      failures.delete(key(name));
      records.set(
        key(name),
        list.map((r) => (typeof r === 'string' ? [r] : r)),
      );
    },
    remove(name) {
      failures.delete(key(name));
      records.delete(key(name));
    },
    fail(name, how) {
      failures.set(key(name), how);
    },
    asked,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
