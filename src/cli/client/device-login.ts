// The device flow from the command line's side (RFC 8628): ask for a device code for the account,
// show the person where to confirm it, and poll the token endpoint at the interval the server
// asks for (five seconds more after each slow_down) until the person approves, denies, or the code
// expires. Each outcome ends in a token or in a ClientFailure that says what happened and what to do.
// A poll that gets no answer in time, or a server error, is retried (MAX_RETRIES in a row).
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerMetadata } from './discovery.js';
import { printable } from './printable.js';
import { ClientFailure, formBody, oauthError, requestJson, TransientFailure } from './server.js';
import { tokenExpiry } from './token-expiry.js';

/** The public client the service knows the command line by. */
export const CLI_CLIENT_ID = 'gatehouse-cli';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** failed polls in a row (no answer in time, no connection, a 5xx) retried before giving up:
 *  the poll after the third retry that fails ends the login */
const MAX_RETRIES = 3;

/** What the server said to show, made printable. */
export interface DeviceStart {
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresAt: number;
  interval: number;
}

export interface IssuedToken {
  accessToken: string;
  tokenType: string;
  /** undefined when neither the answer (expires_in) nor the token (exp) says */
  expiresAt: Date | undefined;
}

export interface DeviceLoginView {
  /** the code and where to confirm it */
  started(start: DeviceStart): void;
  /** between polls: the interval in force and the time left */
  waiting(state: { interval: number; secondsLeft: number; slowedDown: boolean }): void;
  /** polling is over, whatever the outcome */
  stopped(): void;
}

export async function deviceLogin(opts: {
  metadata: ServerMetadata;
  base: string;
  username: string;
  view: DeviceLoginView;
  signal?: AbortSignal;
  now?: () => number;
}): Promise<IssuedToken> {
  const now = opts.now ?? Date.now;
  const endpoint = opts.metadata.device_authorization_endpoint;
  if (!endpoint) throw new ClientFailure(`${opts.base} does not offer device login (its metadata names no device_authorization_endpoint)`);

  const started = await requestJson(endpoint, {
    method: 'POST',
    body: formBody({ client_id: CLI_CLIENT_ID, login_hint: opts.username }),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  if (started.status !== 200) {
    const { error, description } = oauthError(started.body);
    throw new ClientFailure(`the server refused to start a device login (${error}${description ? `: ${description}` : ''})`);
  }
  const b = started.body;
  if (typeof b.device_code !== 'string' || typeof b.user_code !== 'string' || typeof b.verification_uri !== 'string') {
    throw new ClientFailure('the server answered the device login without a device code, user code or verification URI');
  }
  const expiresIn = typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : 600;
  const start: DeviceStart = {
    userCode: printable(b.user_code),
    verificationUri: printable(b.verification_uri),
    verificationUriComplete: printable(typeof b.verification_uri_complete === 'string' ? b.verification_uri_complete : b.verification_uri),
    expiresAt: now() + expiresIn * 1000,
    // RFC 8628 section 3.2: 5 seconds when the server names none
    interval: typeof b.interval === 'number' && b.interval > 0 ? b.interval : 5,
  };
  opts.view.started(start);

  let interval = start.interval;
  let slowedDown = false;
  let transient = 0;
  try {
    for (;;) {
      const secondsLeft = Math.max(0, Math.ceil((start.expiresAt - now()) / 1000));
      if (secondsLeft === 0) throw expired();
      opts.view.waiting({ interval, secondsLeft, slowedDown });
      await sleep(interval * 1000, undefined, { signal: opts.signal });
      let res: Awaited<ReturnType<typeof requestJson>>;
      try {
        res = await requestJson(opts.metadata.token_endpoint, {
          method: 'POST',
          body: formBody({ grant_type: DEVICE_GRANT, device_code: b.device_code, client_id: CLI_CLIENT_ID }),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
      } catch (err) {
        if (opts.signal?.aborted || !(err instanceof TransientFailure)) throw err;
        if (++transient > MAX_RETRIES) throw gaveUp(transient, err.detail);
        continue;
      }
      if (res.status >= 500) {
        if (++transient > MAX_RETRIES) throw gaveUp(transient, `HTTP ${res.status}`);
        continue;
      }
      transient = 0;
      if (res.status === 200 && typeof res.body.access_token === 'string') {
        return {
          accessToken: res.body.access_token,
          tokenType: typeof res.body.token_type === 'string' ? res.body.token_type : 'Bearer',
          expiresAt: tokenExpiry(res.body.access_token, res.body.expires_in, now()),
        };
      }
      const { error, description } = oauthError(res.body);
      switch (error) {
        case 'authorization_pending':
          continue;
        case 'slow_down':
          // section 3.5: the interval grows by 5 seconds, for this and every later poll
          interval += 5;
          slowedDown = true;
          continue;
        case 'access_denied':
          throw new ClientFailure('the login was denied in the browser; nothing was stored. Run gatehouse login again if that was a mistake');
        case 'expired_token':
          throw expired();
        case 'invalid_grant':
          throw new ClientFailure(
            'the server no longer accepts this device code (already used, or the account was disabled since); run gatehouse login again',
          );
        case 'invalid_client':
          throw new ClientFailure(`the server does not accept the command line's client ${CLI_CLIENT_ID} (${description || error})`);
        default:
          throw new ClientFailure(`the server refused the login (${error}${description ? `: ${description}` : ''})`);
      }
    }
  } finally {
    opts.view.stopped();
  }
}

function gaveUp(polls: number, last: string): ClientFailure {
  return new ClientFailure(
    `the server failed ${polls} polls in a row (the last: ${last}); nothing was stored. Check that it is up and run gatehouse login again`,
  );
}

function expired(): ClientFailure {
  return new ClientFailure('the code expired before it was approved; run gatehouse login again and approve within the time shown');
}
