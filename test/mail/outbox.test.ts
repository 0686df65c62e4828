// The mail outbox (docs/operations.md "Mail") against a real SMTP server in the test process:
// what arrives, a server that refuses then accepts, a message that keeps failing, TLS as the URL
// says, several processes on one PostgreSQL delivering each message once, and the outbox folder
// with `gatehouse mail` when no SMTP server is configured.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { loadConfig } from '../../src/config.js';
import { MAX_ATTEMPTS } from '../../src/mail/model.js';
import { FOLDER_MAIL_CONTEXT, smtpTransport } from '../../src/mail/transports.js';
import { SealedBox } from '../../src/crypto/sealed-box.js';
import { openDb } from '../../src/store/db.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { makeCertificate } from '../helpers/openssl.js';
import { linkIn, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createTenant } from '../helpers/tenants.js';
import { mailCommand } from '../../src/cli/commands/mail.js';

const CREATE = `mutation($e: String!, $n: String) {
  createUser(email: $e, display_name: $n) { user { id email email_verified email_status } setup_url setup_link_mailed setup_expires_at }
}`;

async function outboxRows(t: TestApp) {
  return t.db.kysely.selectFrom('mail_outbox').selectAll().orderBy('created_at').execute();
}

for (const engine of engines()) {
  describe(`mail outbox over SMTP (${engine})`, () => {
    let t: TestApp;
    let smtp: TestSmtp;
    before(async () => {
      smtp = await startSmtp();
      t = await startTestApp({
        engine,
        env: { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_VENDOR_NAME: 'Acme <Sign-in> & Co', GATEHOUSE_MAIL_REPLY_TO: 'help@acme.example' },
      });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    it('queues an invitation with the change, sealed at rest, and delivers it: text and escaped HTML, From and Reply-To', async () => {
      const tenant = await createTenant(t, '1', { name: 'Big "Corp" <Ltd>' });
      const res = await t.gql(await t.rootToken(), CREATE, { e: 'Bob@BigCorp.example', n: 'Bob B.' }, { tenant });
      assert.equal(res.body.errors, undefined, res.text);
      const made = res.body.data.createUser;
      assert.equal(made.setup_url, null, 'the link is not handed to the administrator');
      assert.equal(made.setup_link_mailed, true);
      assert.deepEqual([made.user.email_verified, made.user.email_status], [false, 'unverified']);

      const [queued] = await outboxRows(t);
      assert.ok(queued);
      assert.equal(queued.status, 'queued');
      assert.equal(queued.to_address, 'Bob@BigCorp.example');
      assert.ok(queued.body_sealed?.startsWith('v2.'), 'the body is sealed');
      assert.ok(!queued.body_sealed!.includes('token='), 'no link in clear at rest');

      assert.deepEqual(await t.service.services.mail.deliverDue(), { sent: 1, retried: 0, failed: [] });
      const [mail] = await smtp.waitFor(1);
      assert.ok(mail);
      // the domain's case is the mail system's (nodemailer writes it in lower case); the local part is kept
      assert.deepEqual(mail.rcptTo, ['Bob@bigcorp.example']);
      assert.equal(mail.parsed.subject, 'You are invited to Big "Corp" <Ltd> on Acme <Sign-in> & Co');
      assert.equal(mail.parsed.from?.value[0]?.address, 'no-reply@gatehouse.test');
      assert.equal(mail.parsed.from?.value[0]?.name, 'Acme <Sign-in> & Co');
      assert.equal(mail.parsed.replyTo?.value[0]?.address, 'help@acme.example');
      const link = linkIn(mail);
      assert.ok(mail.parsed.text?.includes('Hello Bob B.,'));
      const html = String(mail.parsed.html);
      assert.ok(html.includes('Big &quot;Corp&quot; &lt;Ltd&gt;'), 'the tenant name is escaped in HTML');
      assert.ok(html.includes('Acme &lt;Sign-in&gt; &amp; Co'));
      assert.ok(!html.includes('<Ltd>'));
      assert.ok(html.includes(`href="${link}"`));

      const [sent] = await outboxRows(t);
      assert.equal(sent!.status, 'sent');
      assert.equal(sent!.body_sealed, null, 'the body is dropped once sent');
      assert.ok(!t.logs.some((l) => l.includes(new URL(link).searchParams.get('token')!)), 'the link is never logged');
    });

    it('retries a server that refuses, with back-off, until it accepts', async () => {
      await t.db.kysely.deleteFrom('mail_outbox').execute();
      smtp.received.length = 0;
      smtp.refuseNext(2);
      assert.equal((await t.gql(await t.rootToken(), CREATE, { e: 'retry@example.com' })).status, 200);
      assert.deepEqual(await t.service.services.mail.deliverDue(), { sent: 0, retried: 1, failed: [] });
      let [row] = await outboxRows(t);
      assert.deepEqual([row!.status, row!.attempts], ['queued', 1]);
      assert.match(row!.last_error!, /451/);
      assert.equal(new Date(row!.next_attempt_at).getTime() - t.clock.now().getTime(), 30_000, 'the first retry after 30 s');
      assert.deepEqual(await t.service.services.mail.deliverDue(), { sent: 0, retried: 0, failed: [] }, 'not due yet');
      t.clock.advance(30_000);
      assert.deepEqual(await t.service.services.mail.deliverDue(), { sent: 0, retried: 1, failed: [] });
      [row] = await outboxRows(t);
      assert.equal(new Date(row!.next_attempt_at).getTime() - t.clock.now().getTime(), 60_000, 'then twice as long');
      t.clock.advance(60_000);
      assert.deepEqual(await t.service.services.mail.deliverDue(), { sent: 1, retried: 0, failed: [] });
      await smtp.waitFor(1);
      [row] = await outboxRows(t);
      assert.deepEqual([row!.status, row!.attempts, row!.last_error], ['sent', 3, null]);
      assert.equal(smtp.refused, 2);
    });

    it('marks a message that keeps failing as failed after every attempt: audited, listed, without its body in the trail', async () => {
      await t.db.kysely.deleteFrom('mail_outbox').execute();
      smtp.refuseAll(true);
      try {
        assert.equal((await t.gql(await t.rootToken(), CREATE, { e: 'never@example.com' })).status, 200);
        let failed: { id: string }[] = [];
        for (let i = 1; i <= MAX_ATTEMPTS; i++) {
          const run = await t.service.services.mail.deliverDue();
          assert.equal(run.sent, 0);
          failed = run.failed;
          assert.equal(run.retried + run.failed.length, 1, `attempt ${i} made`);
          t.clock.advance(2 * 3600_000);
        }
        assert.equal(failed.length, 1, `failed after ${MAX_ATTEMPTS} attempts`);
        const [row] = await outboxRows(t);
        assert.deepEqual([row!.status, row!.attempts], ['failed', MAX_ATTEMPTS]);
        assert.ok(row!.body_sealed, 'kept sealed for the operator');
        assert.deepEqual(await t.service.services.mail.deliverDue(), { sent: 0, retried: 0, failed: [] }, 'not tried again');
        const listed = await t.service.services.mail.list(10, 'failed');
        assert.deepEqual(
          listed.map((m) => [m.to, m.status]),
          [['never@example.com', 'failed']],
        );
        const events = await t.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', 'mail.failed').execute();
        assert.equal(events.length, 1);
        assert.equal(events[0]!.outcome, 'failure');
        assert.ok(!JSON.stringify(events).includes('token='), 'the audit event holds no link');
        if (t.db.url) {
          // the operator's view of the table (PostgreSQL: readable beside running servers)
          const config = loadConfig({ DATABASE_URL: t.db.url, GATEHOUSE_ENCRYPTION_KEY: t.config.encryptionKeys[0]!.toString('hex') });
          const listed = await captured(() => mailCommand(config, ['--status', 'failed']));
          assert.match(listed, new RegExp(`${row!.id} .* failed +attempts ${MAX_ATTEMPTS} +to never@example\\.com .*last error: 451`));
          const shown = await captured(() => mailCommand(config, ['show', row!.id]));
          assert.match(shown, /status {6}failed/);
          assert.match(shown, /\/login\/setup\?token=/, 'the operator, who holds the key, can read the failed invitation');
        }
        // kept for the operator 30 days, then forgotten (its audit event stays)
        t.clock.advance(29 * 86_400_000);
        assert.equal(await t.service.services.mail.purge(), 0, 'kept for 30 days');
        t.clock.advance(2 * 86_400_000);
        assert.equal(await t.service.services.mail.purge(), 1, 'the failed one after 30 days');
      } finally {
        smtp.refuseAll(false);
      }
    });

    it('sends nothing when the change is refused (one transaction)', async () => {
      await t.db.kysely.deleteFrom('mail_outbox').execute();
      assert.equal((await t.gql(await t.rootToken(), CREATE, { e: 'dup@example.com' })).status, 200);
      const again = await t.gql(await t.rootToken(), CREATE, { e: 'DUP@example.com' });
      assert.equal(again.body.errors[0].extensions.code, 'CONFLICT');
      assert.equal((await outboxRows(t)).length, 1);
    });
  });
}

describe('mail over TLS as the URL says', () => {
  const cert = makeCertificate({ subject: '/CN=localhost', altName: 'IP:127.0.0.1', key: 'ec' });
  for (const implicit of [true, false]) {
    it(implicit ? 'smtps://: TLS from the start' : 'smtp://: upgraded with STARTTLS when offered', async () => {
      const smtp = await startSmtp({ tls: { key: cert.keyPem, cert: cert.certPem, implicit } });
      const t = await startTestApp({
        engine: 'pglite',
        env: { GATEHOUSE_SMTP_URL: smtp.url },
        // the test's own certificate: trusted here, as an operator's CA would be
        mailTransport: smtpTransport(smtp.url, { rejectUnauthorized: false }),
      });
      try {
        assert.equal((await t.gql(await t.rootToken(), CREATE, { e: 'tls@example.com' })).status, 200);
        assert.equal((await t.service.services.mail.deliverDue()).sent, 1);
        const [mail] = await smtp.waitFor(1);
        assert.equal(mail!.secure, true);
      } finally {
        await t.close();
        await smtp.close();
      }
    });
  }
});

if (process.env.TEST_DATABASE_URL) {
  describe('two processes on one PostgreSQL', () => {
    it('deliver each message once', async () => {
      const smtp = await startSmtp();
      const a = await startTestApp({ engine: 'postgres', env: { GATEHOUSE_SMTP_URL: smtp.url } });
      const b = await startTestApp({
        engine: 'postgres',
        env: { GATEHOUSE_SMTP_URL: smtp.url },
        db: await openDb({ engine: 'postgres', url: a.db.url! }),
        clock: a.clock,
      });
      try {
        const root = await a.rootToken();
        for (let i = 0; i < 30; i++) assert.equal((await a.gql(root, CREATE, { e: `p${i}@example.com` })).status, 200);
        // both at once, several runs each, small batches: they meet on the same rows
        const runs = await Promise.all(
          [a, b, a, b, a, b].map(async (x) => {
            let sent = 0;
            for (let r = 0; r < 10; r++) sent += (await x.service.services.mail.deliverDue(3)).sent;
            return sent;
          }),
        );
        assert.equal(
          runs.reduce((n, s) => n + s, 0),
          30,
        );
        await smtp.waitFor(30);
        await new Promise((r) => setTimeout(r, 200));
        const to = smtp.received.map((m) => m.rcptTo[0]).sort();
        assert.equal(to.length, 30, 'no message twice');
        assert.equal(new Set(to).size, 30);
        assert.ok(runs.filter((s) => s > 0).length >= 2, `both processes delivered: ${runs}`);
      } finally {
        await b.close();
        await a.close();
        await smtp.close();
      }
    });
  });
}

const LEGACY = '0b6e9c1e-2f4a-4c55-9a0e-5d3f1e7a9b21';

describe('without SMTP: the outbox folder and gatehouse mail', () => {
  let dir: string;
  let t: TestApp;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-mail-'));
    // a message an earlier version wrote in clear, with a link in it
    mkdirSync(join(dir, 'outbox'));
    writeFileSync(
      join(dir, 'outbox', `${LEGACY}.eml`),
      'To: old@example.com\nSubject: Old\n\nhttp://gatehouse.test/login/setup?token=legacy-token-in-clear\n',
    );
    t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_DATA_DIR: dir } });
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('at start, seals what an earlier version wrote to the outbox folder in clear', () => {
    assert.equal(existsSync(join(dir, 'outbox', `${LEGACY}.eml`)), false, 'the clear file is gone');
    const sealed = readFileSync(join(dir, 'outbox', `${LEGACY}.eml.sealed`), 'utf8');
    assert.doesNotMatch(sealed, /legacy-token-in-clear/);
    assert.match(new SealedBox(t.config.encryptionKeys).open(sealed.trim(), FOLDER_MAIL_CONTEXT), /token=legacy-token-in-clear/);
    assert.ok(t.logs.some((l) => l.includes('sealed the messages an earlier version wrote to the outbox folder in clear')));
    rmSync(join(dir, 'outbox'), { recursive: true });
  });

  it('shows the link to the administrator and writes the mail, sealed, to the outbox folder, which gatehouse mail lists and shows', async () => {
    const res = await t.gql(await t.rootToken(), CREATE, { e: 'folder@example.com' });
    const made = res.body.data.createUser;
    assert.equal(made.setup_link_mailed, false);
    assert.match(made.setup_url, /\/login\/setup\?token=/);
    assert.equal((await t.service.services.mail.deliverDue()).sent, 1);
    const files = readdirSync(join(dir, 'outbox')).sort();
    assert.equal(files.length, 2);
    const sealed = readFileSync(join(dir, 'outbox', files.find((f) => f.endsWith('.eml.sealed'))!), 'utf8');
    const token = new URL(made.setup_url).searchParams.get('token')!;
    for (const f of files) assert.ok(!readFileSync(join(dir, 'outbox', f), 'utf8').includes(token), `${f}: no link in clear on disk`);
    const box = new SealedBox(t.config.encryptionKeys);
    const eml = await simpleParser(box.open(sealed.trim(), FOLDER_MAIL_CONTEXT));
    assert.ok(eml.text?.includes(made.setup_url), 'the same link as shown');
    assert.equal(eml.subject, 'You are invited to Vendor on Vendor');

    const config = loadConfig({ GATEHOUSE_DATA_DIR: dir, GATEHOUSE_ENCRYPTION_KEY: t.config.encryptionKeys[0]!.toString('hex') });
    const listed = await captured(() => mailCommand(config, []));
    const id = files[0]!.replace(/\.(eml\.sealed|json)$/, '');
    assert.match(listed, new RegExp(`${id} .* to folder@example\\.com +"You are invited to`));
    assert.ok(!listed.includes('token='), 'the list shows no link');
    const shown = await captured(() => mailCommand(config, ['show', id]));
    assert.ok(shown.includes(`To: folder@example.com`));
    assert.ok((await simpleParser(shown.slice(shown.indexOf('\n') + 1))).text?.includes(made.setup_url), 'gatehouse mail show opens it');
    const otherKey = loadConfig({ GATEHOUSE_DATA_DIR: dir, GATEHOUSE_ENCRYPTION_KEY: 'ab'.repeat(32) });
    await assert.rejects(mailCommand(otherKey, ['show', id]), /cannot be opened with the configured GATEHOUSE_ENCRYPTION_KEY/);
  });
});

/** What a command wrote to standard output. */
async function captured(run: () => Promise<number>): Promise<string> {
  const write = process.stdout.write.bind(process.stdout);
  let text = '';
  process.stdout.write = ((chunk: string) => {
    text += chunk;
    return true;
  }) as typeof process.stdout.write;
  try {
    assert.equal(await run(), 0);
  } finally {
    process.stdout.write = write;
  }
  return text;
}
