// What each command says about itself (`gatehouse <command> --help`) and which settings its help
// lists. Kept apart from the commands: main.ts shows help and the version without importing any
// command's module (serve's loads the whole service: Fastify, GraphQL, PGlite), so this file
// imports nothing heavier than the table of settings' types and node:util.
import type { Variable } from '../config.js';
import { CONFIG_DIR_HELP } from './client/options.js';

export const SERVE_USAGE = `Usage: gatehouse serve [--variable value …]

Starts the service: applies missing database migrations, creates the vendor
tenant and the first administrators on an empty database (printing generated
secrets once), loads the signing keys (re-sealing them when
GATEHOUSE_ENCRYPTION_KEY has a new first key), and listens on HOST:PORT; with
GATEHOUSE_METRICS_PORT, /metrics is served on HOST:GATEHOUSE_METRICS_PORT.
SIGTERM or SIGINT (Ctrl-C) stops it: in-flight requests finish (for up to
10 s), buffered state is written, the database is closed; then it exits 0
after SIGTERM, 130 after SIGINT. A repeated signal does not cut the stop short
(npm start and npx pass each Ctrl-C on, so it arrives twice); Ctrl-\\ (SIGQUIT)
ends it at once. A failed start exits non-zero with one line on standard error.

With --workers N (GATEHOUSE_WORKERS; PostgreSQL only) N processes share the
port, one per core: the first starts alone (migrations, first start), then the
others; one that dies is replaced; /metrics sums them all.
`;

export const MIGRATE_USAGE = `Usage: gatehouse migrate [--database-url URL | --data-dir DIR]

Applies the missing database migrations and exits (gatehouse serve also applies
them at start). Safe while other processes use the same PostgreSQL (the
migrations take a database lock); on the embedded database it needs the data
folder's lock, like serve. It needs no GATEHOUSE_ENCRYPTION_KEY.
`;

/** The settings migrate reads (its help lists them, from the table of settings). */
export const MIGRATE_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR'];

export const USERS_USAGE = `Usage:
  gatehouse users create --email ADDRESS [--tenant ID] [--role ROLE]...
                         [--display-name NAME]
  gatehouse users list [--tenant ID] [--json]
  gatehouse users disable --email ADDRESS
  gatehouse users enable --email ADDRESS
  gatehouse users reset --email ADDRESS
  gatehouse users unlock --email ADDRESS

Manages the people who sign in, directly on the configured database
(DATABASE_URL, else the embedded folder GATEHOUSE_DATA_DIR; on the embedded
database stop serve first: the folder has one owner at a time). Day to day, use
the GraphQL operations of docs/users.md instead (createUser, users,
disableUser, enableUser, resetUserSignIn, unlockUserSignIn on /graphql). Changes are audited with
the operator (the OS user who ran the command) as actor.

A set-up link is made with this command's settings, which need not be the
running server's: its address from GATEHOUSE_BASE_URL (else http://HOST:PORT),
its lifetime from GATEHOUSE_USER_SETUP_TTL. Give the server's values, e.g.
--base-url https://id.example.com --user-setup-ttl 86400; the command prints
which it used. Links that createUser returns are the server's own.

  create   creates a user in tenant --tenant (default 1, the vendor) with the
           roles given (Administrator, Analyst, Responder, Auditor; Operations
           and Support in tenant 1 only; names or role ids; default Analyst)
           and prints a one-time set-up link: the person opens it to set a
           password and enrol an authenticator (TOTP)
  list     lists the users of a tenant with status and roles (--json: one
           object per line)
  disable  stops a user: sessions and tokens stop working at once, and stay
           dead if the user is enabled again
  enable   lets a disabled user sign in again
  reset    clears a user's password, authenticator, recovery codes and
           passkeys, ends its tokens, and prints a new set-up link (a lost
           authenticator, or an administrator locked out)
  unlock   clears the failed sign-in attempts that hold a user back (from
           every address, and account-wide) and keeps the password,
           authenticator, recovery codes and passkeys: the person signs in at
           once with them. If wrong codes were tried after a correct password,
           someone knows the password: reset instead
`;

/** The settings `users` reads (its --help lists them). */
export const USERS_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR', 'GATEHOUSE_BASE_URL', 'GATEHOUSE_USER_SETUP_TTL'];

export const KEYS_USAGE = `Usage:
  gatehouse keys list [--json]
  gatehouse keys rotate
  gatehouse keys retire KID [--yes]

Manages the keys that sign access tokens, directly on the configured database
(DATABASE_URL, else the embedded folder GATEHOUSE_DATA_DIR; on the embedded
database stop serve first: the folder has one owner at a time). Running servers
on PostgreSQL follow at once. Changes are audited with the operator (the OS
user) as actor. Keys rotate by
themselves every GATEHOUSE_SIGNING_KEY_ROTATE_DAYS (docs/tokens.md, "Signing
keys"; docs/operations.md, "Signing keys").

  list     every key: its state (pending: published, signs later; signing;
           previous: published until its last token expires; expired;
           retired), when it signs and when it leaves the JWKS (--json: one
           object per line)
  rotate   starts a rotation now: a new key is published at once and signs
           after GATEHOUSE_SIGNING_KEY_PREPUBLISH_HOURS; the current key signs
           until then, then stays published for a token lifetime
  retire   an emergency (a key leaked): the key leaves the JWKS and every
           token it signed is refused at once, on every server; if it signed,
           another key signs at once. Without --yes, says what it would do
`;

/** The settings `keys` reads (its --help lists them). */
export const KEYS_SETTINGS: readonly Variable[] = [
  'DATABASE_URL',
  'GATEHOUSE_DATA_DIR',
  'GATEHOUSE_ENCRYPTION_KEY',
  'GATEHOUSE_TOKEN_TTL',
  'GATEHOUSE_SIGNING_KEY_ROTATE_DAYS',
  'GATEHOUSE_SIGNING_KEY_PREPUBLISH_HOURS',
];
export const AUDIT_USAGE = `Usage:
  gatehouse audit export --since TIME [--tenant ID]

Writes the audit trail to standard output as JSON lines, oldest first, for a
SIEM: one object per event with id, occurred_at, tenant_id, actor_kind,
actor_id, actor_tenant_id, action, outcome (success, failure, refused),
target_kind, target_id, request_id, address and details (never a secret).
Reads the configured database (DATABASE_URL, else the embedded folder
GATEHOUSE_DATA_DIR; on the embedded database stop serve first). Events are kept
GATEHOUSE_AUDIT_RETENTION_DAYS days (docs/operations.md, "Audit trail").

  --since TIME   the events from this time on: an ISO time
                 (2026-11-01T00:00:00Z; without a zone, UTC) or a duration
                 back from now (90m, 24h, 7d)
  --tenant ID    only this tenant's events and those of the tenants below it
`;

/** The settings `audit` reads (its --help lists them). */
export const AUDIT_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR'];

export const SSO_USAGE = `Usage:
  gatehouse sso disable --connection ID
  gatehouse sso release-domain DOMAIN

What an operator does to an SSO connection of any tenant without an
Administrator's token, on the configured database (DATABASE_URL, else the
embedded folder GATEHOUSE_DATA_DIR; on the embedded database stop serve first).
Each change is an audit event of the connection's tenant, with the operator
(your OS user) as actor.

  disable         disables the connection (nobody signs in through it; its
                  settings stay, and its tenant's Administrator can enable it
                  again with updateSSOConnection)
  release-domain  takes DOMAIN from the connection that serves it, so that
                  another tenant can claim it; a connection's only domain is
                  freed by deleting the connection (deleteSSOConnection)
`;

/** The settings `sso` reads (its --help lists them). */
export const SSO_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR'];

export const STATUS_USAGE = `Usage: gatehouse status [--json]

Shows the deployment's state from its database, changing nothing: the
migrations applied and pending, the signing keys as stored (id, algorithm,
created, retired), and the serve processes seen in the last 2 minutes (host,
pid, version, start, last seen: each beats every 30 s). Reads DATABASE_URL,
else the embedded folder GATEHOUSE_DATA_DIR (which a running serve holds: use
PostgreSQL, or stop it). --json: one JSON object.
`;

/** The settings `status` reads (its --help lists them). */
export const STATUS_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR'];

export const LOGIN_USAGE = `Usage:
  gatehouse login --url URL [--username ADDRESS] [--open]

Signs you in from this terminal (a command line or a notebook) with your own
account, without a password at the prompt: it prints a page address and a code;
open the page in a browser, check that it shows the same code, sign in (with
your authenticator) as ADDRESS, and approve. The token is then kept in your
configuration folder, readable by you only, for gatehouse token and gatehouse
whoami; gatehouse logout forgets it. Ctrl-C cancels.

Options:
  --url URL            the server's address (or GATEHOUSE_URL)
  --username ADDRESS   the e-mail address you sign in with (or
                       GATEHOUSE_USERNAME); asked for when not given
  --open               also open the page in your default browser (only a
                       page on the server of --url)

Environment:
${CONFIG_DIR_HELP}
`;

export const TOKEN_USAGE = `Usage:
  gatehouse token [--url URL] [--json]
  gatehouse token --url URL --client-id ID [--client-secret SECRET]
                  [--scope ROLES] [--json]

Prints an access token on standard output, e.g.
  curl -H "Authorization: Bearer $(gatehouse token)" URL/assets/version

With an API client (--client-id, or GATEHOUSE_CLIENT_ID), asks the server for a
token by the client-credentials grant. The secret comes from
GATEHOUSE_CLIENT_SECRET (preferred: a flag is visible to other users of this
machine in the process list) or --client-secret. Without a client, prints the
token of gatehouse login (for --url, else the server of the last login).

Options:
  --url URL              the server's address (or GATEHOUSE_URL)
  --client-id ID         the API client's client_id (or GATEHOUSE_CLIENT_ID)
  --client-secret SECRET its secret (or GATEHOUSE_CLIENT_SECRET)
  --scope ROLES          narrow the token to these roles, space-separated
                         (e.g. "Analyst"); clients only
  --json                 print the token endpoint's whole answer as JSON

Environment:
${CONFIG_DIR_HELP}
`;

export const WHOAMI_USAGE = `Usage:
  gatehouse whoami [--url URL] [--json]

Shows the account that gatehouse login signed in on this machine (for --url,
else the server of the last login): e-mail address, home tenant, the roles in
force, and until when the token works. The server is asked, so a token it no
longer accepts (the account was disabled or its sign-in reset) is reported.

Options:
  --url URL   the server's address (or GATEHOUSE_URL)
  --json      print the answer as JSON

Environment:
${CONFIG_DIR_HELP}
`;

export const LOGOUT_USAGE = `Usage:
  gatehouse logout [--url URL]

Revokes the token that gatehouse login kept for --url (else for the server of
the last login) on that server (RFC 7009), then forgets it on this machine. If
the server cannot be reached or refuses, the token is forgotten here all the
same and a warning says how long it stays valid on the server. To end every
token of an account at once, an administrator resets its sign-in
(resetUserSignIn, or gatehouse users reset).

After logging out of the current server no login is current, even if others
are kept: the commands then need --url (or GATEHOUSE_URL) to pick one.

Options:
  --url URL   the server's address (or GATEHOUSE_URL)

Environment:
${CONFIG_DIR_HELP}
`;

export const MAIL_USAGE = `Usage:
  gatehouse mail [list] [--status STATUS] [--limit N]
  gatehouse mail show ID

The mail the service sent or is sending (docs/operations.md, "Mail"). Without
GATEHOUSE_SMTP_URL (the embedded default) every message is written to the
outbox folder of the data folder (GATEHOUSE_DATA_DIR/outbox), which this
command reads even while serve runs: set-up links are there. It also reads the
outbox table of the configured database (DATABASE_URL, else the embedded
folder, which a running serve holds): messages queued, retried, or failed after
every attempt (with the last error).

  list            the newest messages first (the default action)
  show ID         one message: from the outbox folder as it was written, else
                  its state in the table (and its text while it is not sent)
  --status STATUS only messages in this state of the table: queued, sending,
                  sent or failed
  --limit N       at most N messages of each (default 50)
`;

/** The settings `mail` reads (its --help lists them). */
export const MAIL_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR', 'GATEHOUSE_ENCRYPTION_KEY', 'GATEHOUSE_SMTP_URL'];
