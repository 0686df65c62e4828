// gatehouse login: a person signs this terminal in by device login (RFC 8628) and the token is
// kept in the user's configuration folder (cli/client/credentials-file.ts) for token and whoami.
// Ctrl-C at any point (the prompt, discovery, waiting for approval) cancels: exit 130, nothing kept.
import { CredentialsFile } from '../client/credentials-file.js';
import { deviceLogin, type IssuedToken } from '../client/device-login.js';
import { discover } from '../client/discovery.js';
import { type Interrupt, listenForInterrupt } from '../client/interrupt.js';
import { openPage } from '../client/open-page.js';
import { CLIENT_ENVIRONMENT, parseOptions } from '../client/options.js';
import { progressView } from '../client/progress.js';
import { ask } from '../client/prompt.js';
import { requiredServer, sentInClear } from '../client/server.js';
import { EXIT_INTERRUPTED } from '../exit-codes.js';
import { UsageError } from '../usage-error.js';

export async function loginCommand(args: string[]): Promise<number> {
  const o = parseOptions(args, { url: { type: 'string' }, username: { type: 'string' }, open: { type: 'boolean' } });
  const base = requiredServer(o.url);
  const interrupt = listenForInterrupt();
  try {
    const username = o.username || process.env[CLIENT_ENVIRONMENT.username] || (await ask('E-mail address to sign in as: ', interrupt));
    if (!username) {
      process.stderr.write('\n');
      throw new UsageError(`no account named: give --username (the e-mail address you sign in with)`);
    }
    return await signIn(base, username, o.open === true, interrupt);
  } catch (err) {
    if (interrupt.signal.aborted) {
      process.stderr.write('gatehouse: login cancelled; nothing was stored\n');
      return EXIT_INTERRUPTED;
    }
    throw err;
  } finally {
    interrupt.dispose();
  }
}

async function signIn(base: string, username: string, open: boolean, interrupt: Interrupt): Promise<number> {
  if (sentInClear(base))
    process.stderr.write(`warning: ${base} is plain http; your token travels unencrypted. Use https:// for a server on another machine.\n`);
  const metadata = await discover(base, interrupt.signal);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  const view = progressView(process.stderr, print);
  const token: IssuedToken = await deviceLogin({
    metadata,
    base,
    username,
    signal: interrupt.signal,
    view: {
      ...view,
      started(start) {
        view.started(start);
        if (open) openPage(start.verificationUriComplete, base);
      },
    },
  });

  const file = new CredentialsFile();
  const expiresAt = token.expiresAt?.toISOString();
  file.save({
    url: base,
    username,
    access_token: token.accessToken,
    token_type: token.tokenType,
    ...(expiresAt ? { expires_at: expiresAt } : {}),
    obtained_at: new Date().toISOString(),
  });
  const lifetime = expiresAt ? `The token works until ${expiresAt}` : 'The server named no expiry for the token (it decides when it stops working)';
  print(`Signed in to ${base} as ${username}. ${lifetime}; it is kept in ${file.path}.`);
  print('Use it with: gatehouse token (prints it), gatehouse whoami, gatehouse logout.');
  return 0;
}
