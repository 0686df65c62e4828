// Unit tests of src/config.ts: the defaults of CONTRACT.md's table, one clear problem per invalid
// variable (all reported at once, none echoing a secret), and flags that override variables.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ADMIN_EMAIL } from '../src/bootstrap/bootstrap.js';
import { ConfigError, flagsToVariables, KNOWN_VARIABLES, loadConfig, REGIONS, RULES, SETTING_ROWS } from '../src/config.js';

function problemsOf(env: Record<string, string>, overrides: Record<string, string> = {}, opts: { serving?: boolean } = {}): string[] {
  try {
    loadConfig(env, overrides, opts);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig defaults (CONTRACT.md)', () => {
  it('match the table with an empty environment', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.dataDir, './data');
    assert.equal(c.region, 'us1');
    assert.equal(c.baseUrl, 'http://127.0.0.1:8080');
    assert.equal(c.tenantsUrl, c.baseUrl);
    assert.equal(c.tokenTtlSeconds, 36000);
    assert.equal(c.clientCreateLimit, 10);
    assert.equal(c.expiryGraceDays, 60);
    assert.equal(c.ssoAllowPrivateUrls, false);
    assert.equal(c.vendorName, 'Vendor');
    assert.deepEqual(c.bootstrap, { clientId: undefined, clientSecret: undefined, adminEmail: undefined, adminPassword: undefined });
    assert.equal(c.logLevel, 'info');
    assert.deepEqual(c.encryptionKeys, []);
    assert.equal(c.metricsPort, undefined, '/metrics is not served unless a port is given');
    assert.equal(c.graphqlIntrospection, true, 'introspection is on unless turned off (CONTRACT.md)');
  });

  it('treats an empty variable as unset', () => {
    const c = loadConfig({ PORT: '', GATEHOUSE_REGION: '', DATABASE_URL: '', LOG_LEVEL: '', GATEHOUSE_TOKEN_TTL: '' });
    assert.equal(c.port, 8080);
    assert.equal(c.region, 'us1');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.tokenTtlSeconds, 36000);
  });

  it('derives the base URL from HOST and PORT, and the tenants URL from the base URL', () => {
    assert.equal(loadConfig({ HOST: '10.1.2.3', PORT: '9000' }).baseUrl, 'http://10.1.2.3:9000');
    assert.equal(loadConfig({ HOST: '::1', PORT: '9000' }).baseUrl, 'http://[::1]:9000');
    // a wildcard listen address is not an address anyone can reach: loopback stands in
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).baseUrl, 'http://127.0.0.1:9000');
    const c = loadConfig({ GATEHOUSE_BASE_URL: 'https://auth.example.com/' });
    assert.equal(c.baseUrl, 'https://auth.example.com', 'a trailing slash is dropped');
    assert.equal(c.tenantsUrl, 'https://auth.example.com');
    assert.equal(loadConfig({ GATEHOUSE_BASE_URL: 'https://a.example', GATEHOUSE_TENANTS_URL: 'https://t.example' }).tenantsUrl, 'https://t.example');
  });

  it('reads every documented variable', () => {
    const c = loadConfig({
      PORT: '9001',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://u:p@db:5432/gatehouse',
      GATEHOUSE_DATA_DIR: '/var/lib/gatehouse',
      GATEHOUSE_REGION: 'eu2',
      GATEHOUSE_TOKEN_TTL: '600',
      GATEHOUSE_CLIENT_CREATE_LIMIT: '3',
      GATEHOUSE_EXPIRY_GRACE_DAYS: '0',
      GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true',
      GATEHOUSE_VENDOR_NAME: 'Acme',
      GATEHOUSE_BOOTSTRAP_CLIENT_ID: 'root-admin',
      GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: 's'.repeat(32),
      GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL: 'root@example.com',
      GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD: 'p'.repeat(12),
      GATEHOUSE_ENCRYPTION_KEY: 'ab'.repeat(32),
      GATEHOUSE_GRAPHQL_INTROSPECTION: 'no',
      GATEHOUSE_LAST_USED_FLUSH_SECONDS: '5',
      GATEHOUSE_METRICS_PORT: '9464',
      LOG_LEVEL: 'warn',
    });
    assert.equal(c.port, 9001);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.databaseUrl, 'postgresql://u:p@db:5432/gatehouse');
    assert.equal(c.dataDir, '/var/lib/gatehouse');
    assert.equal(c.region, 'eu2');
    assert.equal(c.tokenTtlSeconds, 600);
    assert.equal(c.clientCreateLimit, 3);
    assert.equal(c.expiryGraceDays, 0);
    assert.equal(c.ssoAllowPrivateUrls, true);
    assert.equal(c.vendorName, 'Acme');
    assert.deepEqual(c.bootstrap, {
      clientId: 'root-admin',
      clientSecret: 's'.repeat(32),
      adminEmail: 'root@example.com',
      adminPassword: 'p'.repeat(12),
    });
    assert.deepEqual(c.encryptionKeys, [Buffer.alloc(32, 0xab)]);
    assert.equal(c.graphqlIntrospection, false);
    assert.equal(c.lastUsedFlushSeconds, 5);
    assert.equal(c.metricsPort, 9464);
    assert.equal(c.logLevel, 'warn');
  });

  it('accepts every region of the contract', () => {
    assert.deepEqual([...REGIONS], ['us1', 'us2', 'us3', 'eu1', 'eu2']);
    for (const region of REGIONS) assert.equal(loadConfig({ GATEHOUSE_REGION: region }).region, region);
  });

  it('accepts the encryption key as hex or base64', () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    assert.deepEqual(loadConfig({ GATEHOUSE_ENCRYPTION_KEY: key.toString('hex') }).encryptionKeys, [key]);
    assert.deepEqual(loadConfig({ GATEHOUSE_ENCRYPTION_KEY: key.toString('base64') }).encryptionKeys, [key]);
  });

  it('accepts a comma-separated list of encryption keys, in order (the first seals)', () => {
    const a = Buffer.alloc(32, 0xa1);
    const b = Buffer.alloc(32, 0xb2);
    const c = Buffer.alloc(32, 0xc3);
    assert.deepEqual(loadConfig({ GATEHOUSE_ENCRYPTION_KEY: `${b.toString('hex')},${a.toString('hex')}` }).encryptionKeys, [b, a]);
    assert.deepEqual(
      loadConfig({ GATEHOUSE_ENCRYPTION_KEY: ` ${a.toString('hex')} , ${b.toString('base64')},${c.toString('hex')}` }).encryptionKeys,
      [a, b, c],
      'spaces around the commas are ignored; hex and base64 mix',
    );
  });

  it('requires GATEHOUSE_ENCRYPTION_KEY for serving on PostgreSQL only, and names the way to make one', () => {
    const pgEnv = { DATABASE_URL: 'postgres://u:secret-pw@db.example/gh' };
    assert.deepEqual(loadConfig(pgEnv).encryptionKeys, [], 'migrate (not serving) needs no key');
    assert.deepEqual(loadConfig({}, {}, { serving: true }).encryptionKeys, [], 'serving on PGlite falls back to the key file');
    const problems = problemsOf(pgEnv, {}, { serving: true });
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^GATEHOUSE_ENCRYPTION_KEY: .*DATABASE_URL/);
    assert.match(problems[0]!, /openssl rand -hex 32/);
    assert.equal(problems[0]!.includes('secret-pw'), false);
    const key = 'ab'.repeat(32);
    assert.deepEqual(loadConfig({ ...pgEnv, GATEHOUSE_ENCRYPTION_KEY: key }, {}, { serving: true }).encryptionKeys, [Buffer.alloc(32, 0xab)]);
  });

  it('reads booleans as true/false, 1/0, yes/no in any case', () => {
    for (const v of ['true', 'TRUE', '1', 'yes', 'Yes'])
      assert.equal(loadConfig({ GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: v }).ssoAllowPrivateUrls, true, v);
    for (const v of ['false', 'False', '0', 'no', 'NO'])
      assert.equal(loadConfig({ GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: v }).ssoAllowPrivateUrls, false, v);
  });

  it('lets an override (a flag) win over the environment', () => {
    assert.equal(loadConfig({ PORT: '1000' }, { PORT: '2000' }).port, 2000);
    assert.equal(loadConfig({ GATEHOUSE_DATA_DIR: '/env' }, { GATEHOUSE_DATA_DIR: '/flag' }).dataDir, '/flag');
  });
});

describe('loadConfig problems', () => {
  // [variable, bad value, extra valid variables needed to isolate the problem]
  const cases: [string, string, Record<string, string>?][] = [
    ['PORT', 'abc'],
    ['GATEHOUSE_SMTP_URL', 'http://user:hunter2@mail.example.com'],
    ['GATEHOUSE_SMTP_URL', 'smtp://user:hunter2@'],
    ['GATEHOUSE_MAIL_FROM', 'not an address'],
    ['GATEHOUSE_MAIL_REPLY_TO', 'nobody'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', ' 80'],
    ['DATABASE_URL', 'mysql://root:hunter2@db/gatehouse'],
    ['DATABASE_URL', 'localhost:5432'],
    ['GATEHOUSE_REGION', 'mars'],
    ['GATEHOUSE_REGION', 'US1'],
    ['GATEHOUSE_BASE_URL', 'ftp://example.com'],
    ['GATEHOUSE_BASE_URL', 'not a url'],
    ['GATEHOUSE_BASE_URL', 'https://example.com/?x=1'],
    ['GATEHOUSE_BASE_URL', 'https://example.com/#top'],
    ['GATEHOUSE_TENANTS_URL', 'javascript:alert(1)'],
    ['GATEHOUSE_TOKEN_TTL', '0'],
    ['GATEHOUSE_TOKEN_TTL', '59'],
    ['GATEHOUSE_TOKEN_TTL', '1h'],
    ['GATEHOUSE_TOKEN_TTL', String(7 * 24 * 3600 + 1)],
    ['GATEHOUSE_CLIENT_CREATE_LIMIT', '0'],
    ['GATEHOUSE_CLIENT_CREATE_LIMIT', 'ten'],
    ['GATEHOUSE_EXPIRY_GRACE_DAYS', '-5'],
    ['GATEHOUSE_EXPIRY_GRACE_DAYS', '3651'],
    ['GATEHOUSE_SSO_ALLOW_PRIVATE_URLS', 'maybe'],
    ['GATEHOUSE_BOOTSTRAP_CLIENT_ID', 'has space', { GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: 'x'.repeat(40) }],
    ['GATEHOUSE_BOOTSTRAP_CLIENT_ID', 'ab', { GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: 'x'.repeat(40) }],
    ['GATEHOUSE_BOOTSTRAP_CLIENT_SECRET', 'short-secret-123', { GATEHOUSE_BOOTSTRAP_CLIENT_ID: 'root-admin' }],
    ['GATEHOUSE_BOOTSTRAP_CLIENT_SECRET', 'y'.repeat(257), { GATEHOUSE_BOOTSTRAP_CLIENT_ID: 'root-admin' }],
    ['GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL', 'not-an-email'],
    ['GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD', 'short-pw'],
    ['GATEHOUSE_ENCRYPTION_KEY', 'deadbeef'],
    ['GATEHOUSE_ENCRYPTION_KEY', 'ab'.repeat(31)],
    ['GATEHOUSE_ENCRYPTION_KEY', `${'ab'.repeat(32)},${'cd'.repeat(31)}`],
    ['GATEHOUSE_ENCRYPTION_KEY', `${'ab'.repeat(32)},${'AB'.repeat(32)}`],
    ['GATEHOUSE_ENCRYPTION_KEY', `${'ab'.repeat(32)},${Buffer.alloc(32, 0xab).toString('base64')}`],
    ['GATEHOUSE_ENCRYPTION_KEY', `${'ab'.repeat(32)},`],
    ['GATEHOUSE_ENCRYPTION_KEY', `${'ab'.repeat(32)},,${'cd'.repeat(32)}`],
    ['GATEHOUSE_ENCRYPTION_KEY', `${'ab'.repeat(32)},${'cd'.repeat(32)}!`],
    ['GATEHOUSE_GRAPHQL_INTROSPECTION', 'on'],
    ['GATEHOUSE_LAST_USED_FLUSH_SECONDS', '0'],
    ['GATEHOUSE_METRICS_PORT', 'abc'],
    ['GATEHOUSE_METRICS_PORT', '0'],
    ['GATEHOUSE_METRICS_PORT', '65536'],
    ['GATEHOUSE_METRICS_PORT', '9100', { PORT: '9100' }],
    ['GATEHOUSE_METRICS_PORT', '8080'],
    ['LOG_LEVEL', 'verbose'],
  ];
  /** values that may hold credentials: a problem line must not repeat them */
  const SECRET_VARIABLES = new Set([
    'DATABASE_URL',
    'GATEHOUSE_BOOTSTRAP_CLIENT_SECRET',
    'GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD',
    'GATEHOUSE_ENCRYPTION_KEY',
    // its user:password@
    'GATEHOUSE_SMTP_URL',
  ]);

  it('marks every variable that may hold a credential secret in the table of settings', () => {
    const secret = SETTING_ROWS.filter((row) => row.setting.secret).map((row) => row.setting.variable);
    assert.deepEqual(new Set(secret), SECRET_VARIABLES);
  });

  it('quotes a non-secret value on one line, cut short', () => {
    const [problem] = problemsOf({ PORT: '80\n81' });
    assert.equal(problem, 'PORT: must be a whole number from 0 to 65535, got "80\\n81"');
    const [long] = problemsOf({ GATEHOUSE_REGION: 'x'.repeat(300) });
    assert.match(long!, /, got "x{100}…"$/);
  });

  for (const [name, value, extra] of cases) {
    it(`${name}=${JSON.stringify(value.length > 40 ? value.slice(0, 12) + '…' : value)} is one problem naming ${name}`, () => {
      const problems = problemsOf({ ...extra, [name]: value });
      assert.equal(problems.length, 1, problems.join('\n'));
      const [problem] = problems as [string];
      assert.ok(problem.startsWith(`${name}: `) || problem.startsWith(`${name} `), problem);
      assert.equal(problem.includes('\n'), false, 'one line');
      if (SECRET_VARIABLES.has(name)) assert.equal(problem.includes(value), false, `the problem does not echo the value: ${problem}`);
    });
  }

  it('names which key of the list is wrong, and why, without echoing any key', () => {
    const good = 'ab'.repeat(32);
    const short = 'cd'.repeat(31);
    const [length] = problemsOf({ GATEHOUSE_ENCRYPTION_KEY: `${good},${short}` });
    assert.match(length!, /key 2 of 2 is not 32 bytes/);
    const [repeat] = problemsOf({ GATEHOUSE_ENCRYPTION_KEY: `${'ef'.repeat(32)},${good},${good.toUpperCase()}` });
    assert.match(repeat!, /key 3 of 3 repeats key 2/);
    const [empty] = problemsOf({ GATEHOUSE_ENCRYPTION_KEY: `${good},,${'ef'.repeat(32)}` });
    assert.match(empty!, /key 2 of 3 is empty/);
    for (const p of [length!, repeat!, empty!]) {
      assert.equal(p.includes(good) || p.includes(short) || p.includes(good.toUpperCase()), false, p);
      assert.match(p, /openssl rand -hex 32/);
    }
  });

  it('reads GATEHOUSE_DNS_SERVERS as IP addresses with optional ports (IPv6 in brackets with a port), and refuses names', () => {
    assert.equal(loadConfig({}).dnsServers, undefined, "unset: the system's resolvers");
    assert.deepEqual(loadConfig({ GATEHOUSE_DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,[::1]:53,2001:db8::1' }).dnsServers, [
      '1.1.1.1',
      '127.0.0.1:5353',
      '[::1]:53',
      '2001:db8::1',
    ]);
    const [problem] = problemsOf({ GATEHOUSE_DNS_SERVERS: '1.1.1.1,dns.example,10.0.0.1:99999' });
    assert.match(
      problem!,
      /^GATEHOUSE_DNS_SERVERS: must be IP addresses, each with an optional port \(IPv6 as \[IP\]:PORT\); not "dns\.example", "10\.0\.0\.1:99999"/,
    );
  });

  it('reports GATEHOUSE_METRICS_PORT equal to PORT as a clash, naming both', () => {
    const problems = problemsOf({ PORT: '9100', GATEHOUSE_METRICS_PORT: '9100' });
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^GATEHOUSE_METRICS_PORT: must differ from PORT/);
    // an invalid PORT is reported alone, not as a clash with the default it falls back to
    assert.deepEqual(
      problemsOf({ PORT: 'x', GATEHOUSE_METRICS_PORT: '8080' }).map((p) => p.split(':')[0]),
      ['PORT'],
    );
  });

  it('holds the vendor name, URLs and the admin e-mail to the text rules and limits of the interfaces', () => {
    const problems = problemsOf({
      GATEHOUSE_VENDOR_NAME: 'Ven\u200bdor',
      GATEHOUSE_BASE_URL: `https://gatehouse.example/${'p'.repeat(2100)}`,
      GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL: `${'a'.repeat(250)}@example.com`,
    });
    assert.deepEqual(problems.map((p) => p.split(':')[0]).sort(), ['GATEHOUSE_BASE_URL', 'GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL', 'GATEHOUSE_VENDOR_NAME']);
    assert.match(problems.find((p) => p.startsWith('GATEHOUSE_VENDOR_NAME'))!, /invisible/);
    assert.match(problems.find((p) => p.startsWith('GATEHOUSE_BASE_URL'))!, /at most 2048 characters/);
    assert.deepEqual(problemsOf({ GATEHOUSE_VENDOR_NAME: 'x'.repeat(201) }).length, 1);
  });

  it('reports a bootstrap client id without a secret (and the reverse), naming both variables', () => {
    for (const env of [{ GATEHOUSE_BOOTSTRAP_CLIENT_ID: 'root-admin' }, { GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: 'z'.repeat(40) }] as Record<
      string,
      string
    >[]) {
      const problems = problemsOf(env);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0]!, /GATEHOUSE_BOOTSTRAP_CLIENT_ID/);
      assert.match(problems[0]!, /GATEHOUSE_BOOTSTRAP_CLIENT_SECRET/);
      assert.equal(problems[0]!.includes('z'.repeat(40)), false);
    }
  });

  it('reports every problem at once, one line each, in the error message too', () => {
    const env = {
      PORT: 'abc',
      GATEHOUSE_REGION: 'mars',
      GATEHOUSE_TOKEN_TTL: '1',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      GATEHOUSE_GRAPHQL_INTROSPECTION: 'perhaps',
      GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL: 'nobody',
    };
    let error: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof ConfigError);
    assert.equal(error.name, 'ConfigError');
    assert.equal(error.problems.length, Object.keys(env).length, error.problems.join('\n'));
    for (const name of Object.keys(env)) {
      assert.equal(error.problems.filter((p) => p.startsWith(`${name}: `)).length, 1, `one problem names ${name}`);
    }
    assert.deepEqual(error.message.split('\n'), error.problems);
  });

  it('validates overrides exactly like the environment', () => {
    const problems = problemsOf({ PORT: '8080' }, { PORT: 'x' });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^PORT: /);
  });
});

describe('the table of settings (src/config/settings.ts)', () => {
  it('declares each variable once, with a description of one line, the values it accepts and its default', () => {
    assert.equal(new Set(KNOWN_VARIABLES).size, KNOWN_VARIABLES.length);
    assert.equal(new Set(SETTING_ROWS.map((row) => row.path.join('.'))).size, SETTING_ROWS.length);
    for (const { setting } of SETTING_ROWS) {
      for (const text of [setting.description, setting.accepts, setting.shownDefault]) {
        assert.ok(text.trim() !== '' && !text.includes('\n'), `${setting.variable}: ${JSON.stringify(text)}`);
      }
    }
  });

  it('every fixed default is a value its own kind accepts', () => {
    for (const { setting } of SETTING_ROWS) {
      if (setting.fallback === 'derived' || setting.fallback.value === undefined || Array.isArray(setting.fallback.value)) continue;
      assert.deepEqual(setting.parse(String(setting.fallback.value)), { value: setting.fallback.value }, setting.variable);
    }
  });

  it('every value of loadConfig comes from a row: the rows are the Config', () => {
    const paths = (o: object, at: string[] = []): string[] =>
      Object.entries(o).flatMap(([k, v]) =>
        v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) ? paths(v, [...at, k]) : [[...at, k].join('.')],
      );
    assert.deepEqual(
      paths(loadConfig({})),
      SETTING_ROWS.map((row) => row.path.join('.')),
    );
  });

  it('shows the default admin e-mail that bootstrap uses', () => {
    const row = SETTING_ROWS.find((r) => r.setting.variable === 'GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL')!;
    assert.equal(row.setting.shownDefault, `\`${DEFAULT_ADMIN_EMAIL}\``);
    assert.equal(loadConfig({}).bootstrap.adminEmail, undefined, 'bootstrap applies the default');
  });

  it('names only variables of the table in its rules, and shows each rule with its variables', () => {
    for (const rule of RULES) {
      for (const variable of rule.variables) {
        assert.ok(SETTING_ROWS.find((row) => row.setting.variable === variable)!.rules.includes(rule.doc), variable);
      }
    }
  });
});

describe('flagsToVariables', () => {
  it('maps --port 9000 and --port=1', () => {
    assert.deepEqual(flagsToVariables(['serve', '--port', '9000']), { vars: { PORT: '9000' }, rest: ['serve'] });
    assert.deepEqual(flagsToVariables(['--port=1', 'serve']), { vars: { PORT: '1' }, rest: ['serve'] });
  });

  it('maps --data-dir and --database-url, with or without =', () => {
    assert.deepEqual(flagsToVariables(['serve', '--data-dir', '/tmp/gh', '--database-url=postgres://u@h/db?sslmode=require']), {
      vars: { GATEHOUSE_DATA_DIR: '/tmp/gh', DATABASE_URL: 'postgres://u@h/db?sslmode=require' },
      rest: ['serve'],
    });
    assert.deepEqual(flagsToVariables(['--database-url', 'postgres://h/db', '--data-dir=./d']).vars, {
      DATABASE_URL: 'postgres://h/db',
      GATEHOUSE_DATA_DIR: './d',
    });
  });

  it('maps every known variable by its flag name, with or without the GATEHOUSE_ prefix', () => {
    assert.deepEqual(flagsToVariables(['--region', 'eu1', '--gatehouse-token-ttl=60', '--log-level', 'debug', '--host=0.0.0.0']).vars, {
      GATEHOUSE_REGION: 'eu1',
      GATEHOUSE_TOKEN_TTL: '60',
      LOG_LEVEL: 'debug',
      HOST: '0.0.0.0',
    });
    for (const name of KNOWN_VARIABLES) {
      const flag = `--${name
        .replace(/^GATEHOUSE_/, '')
        .toLowerCase()
        .replace(/_/g, '-')}`;
      assert.deepEqual(flagsToVariables([flag, 'v']).vars, { [name]: 'v' }, flag);
    }
  });

  it('leaves commands, unknown flags and --help alone', () => {
    assert.deepEqual(flagsToVariables(['--help']), { vars: {}, rest: ['--help'] });
    assert.deepEqual(flagsToVariables(['serve', '--verbose', 'x']), { vars: {}, rest: ['serve', '--verbose', 'x'] });
    assert.deepEqual(flagsToVariables(['migrate']), { vars: {}, rest: ['migrate'] });
  });

  it('keeps a value that looks like a flag (--port=--x) and gives a trailing flag an empty value', () => {
    assert.deepEqual(flagsToVariables(['--port=--x']).vars, { PORT: '--x' });
    assert.deepEqual(flagsToVariables(['serve', '--port']), { vars: { PORT: '' }, rest: ['serve'] });
  });

  it('feeds loadConfig: the flag overrides the variable', () => {
    const { vars } = flagsToVariables(['serve', '--port', '9123', '--data-dir=/srv/gh']);
    const c = loadConfig({ PORT: '8000', GATEHOUSE_DATA_DIR: '/env/dir' }, vars);
    assert.equal(c.port, 9123);
    assert.equal(c.dataDir, '/srv/gh');
    assert.equal(c.baseUrl, 'http://127.0.0.1:9123');
  });
});
