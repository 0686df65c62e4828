// The HTML of the person's own account page (account.ts): their password, authenticator,
// recovery codes, passkeys and sessions; a passkey's removal, confirmed first; the new authenticator's key and the new recovery codes, each shown
// in the answer to the form that made them.
import type { Session, SessionSummary } from '../../../sessions/model.js';
import type { Passkey } from '../../../signin/store.js';
import { PASSKEY_NAME_MAX, type PublicKeyCredentialCreationOptionsJSON } from '../../../signin/webauthn.js';
import type { TotpSecret } from '../../../users/totp.js';
import { html, trusted } from '../html.js';
import { csrfField } from '../page-kit.js';
import { noticeOf, type View, when } from './layout.js';
import {
  ACCOUNT_AUTHENTICATOR_CONFIRM_PATH,
  ACCOUNT_AUTHENTICATOR_PATH,
  ACCOUNT_PASSKEY_REMOVE_PATH,
  ACCOUNT_PASSKEYS_PATH,
  ACCOUNT_EMAIL_CONFIRM_PATH,
  ACCOUNT_EMAIL_PATH,
  ACCOUNT_PASSWORD_PATH,
  ACCOUNT_PATH,
  ACCOUNT_RECOVERY_CODES_PATH,
  ACCOUNT_SESSIONS_PATH,
  CONSOLE_PATH,
} from './paths.js';

/** A refusal of one of the account page's forms, shown above that form. */
export interface FormFailure {
  form: 'password' | 'authenticator' | 'recovery' | 'passkey' | 'email';
  message: string;
}

const failureOf = (f: FormFailure | undefined, form: FormFailure['form']) =>
  f?.form === form ? html`<div class="error" role="alert"><p>${f.message}</p><p>Correct it and send the form again.</p></div>` : '';

/** A form asking a current code from the authenticator app. */
function codeForm(o: { session: Session; id: string; action: string; button: string; hint: string }) {
  return html`<form class="fields" method="post" action="${o.action}">${csrfField(o.session)}
<label for="${o.id}">Code from your authenticator app</label>
<input id="${o.id}" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required aria-describedby="${o.id}-hint">
<p id="${o.id}-hint" class="hint">${o.hint}</p>
<div class="actions"><button type="submit">${o.button}</button></div>
</form>`;
}

/** Opening the link mailed to a new address without being signed in. */
export function signInToConfirm(): View {
  return {
    title: 'Sign in to confirm your address',
    body: html`<p>This link confirms a new e-mail address for an account. Sign in as that account (with the address you use now), then open the link in the mail again.</p>
<p><a href="/login?return_to=${encodeURIComponent(ACCOUNT_PATH)}">Sign in</a></p>`,
  };
}

/** The link mailed to a new address, opened signed in: what it will do, and a button that does it
 *  (a form with the session's CSRF token: a page elsewhere cannot make a browser confirm by
 *  sending it to the link). */
export function confirmEmailChangePage(o: { session: Session; email: string; newEmail: string; token: string }): View {
  return {
    title: 'Use your new e-mail address',
    body: html`<p>Signed in as <strong>${o.email}</strong>. From now on, sign in with <strong>${o.newEmail}</strong>, and messages about your account go there.</p>
<form method="post" action="${ACCOUNT_EMAIL_CONFIRM_PATH}">${csrfField(o.session)}
<input type="hidden" name="token" value="${o.token}">
<div class="actions"><button type="submit">Use ${o.newEmail}</button><a href="${ACCOUNT_PATH}">Cancel</a></div>
</form>
<p class="hint">Did not ask for this? Choose Cancel, then change your password and replace your authenticator: whoever asked was signed in as you.</p>`,
  };
}

export function accountPage(o: {
  session: Session;
  email: string;
  sessions: SessionSummary[];
  notice?: string | undefined;
  failure?: FormFailure | undefined;
  /** a new authenticator waits for its first code */
  reenrolPending?: boolean;
  passkeys?: Passkey[];
  /** the options of the "Add a passkey" form (its challenge in the session); none: passkeys cannot be added */
  passkeyOptions?: PublicKeyCredentialCreationOptionsJSON | undefined;
  /** a new address waits for its link to be followed */
  pendingEmail?: { email: string; expiresAt: Date } | undefined;
}): View {
  const here = (s: SessionSummary) => s.idHash.equals(o.session.idHash);
  const others = o.sessions.filter((s) => !here(s)).length;
  return {
    title: 'Your account',
    body: html`${noticeOf(o.notice)}
<p class="lead">Signed in as <strong>${o.email}</strong>.</p>
<h2 id="password-heading">Change your password</h2>
${failureOf(o.failure, 'password')}
<form class="fields" method="post" action="${ACCOUNT_PASSWORD_PATH}" aria-labelledby="password-heading">${csrfField(o.session)}
<label for="current">Current password</label>
<input id="current" name="current" type="password" autocomplete="current-password" required>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required aria-describedby="password-hint">
<p id="password-hint" class="hint">At least 12 characters; a phrase of several words is easy to remember and hard to guess. Not your e-mail address.</p>
<label for="confirmation">New password again</label>
<input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required>
<div class="actions"><button type="submit">Change password</button></div>
</form>
<h2 id="email-heading">Your e-mail address</h2>
<p>A new address takes effect only once you follow the link we mail to it, signed in as you are now: that proves it is yours.</p>
${o.pendingEmail ? html`<p class="notice" role="status">You asked to use <strong>${o.pendingEmail.email}</strong>: if it can be yours, a confirmation link was mailed to it, which works until ${when(o.pendingEmail.expiresAt)}. Until you follow it, you sign in as ${o.email}.</p>` : ''}
${failureOf(o.failure, 'email')}
<form class="fields" method="post" action="${ACCOUNT_EMAIL_PATH}" aria-labelledby="email-heading">${csrfField(o.session)}
<label for="new-email">New e-mail address</label>
<input id="new-email" name="email" type="email" autocomplete="email" required>
<label for="email-code">Code from your authenticator app</label>
<input id="email-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required aria-describedby="email-code-hint">
<p id="email-code-hint" class="hint">The code your authenticator app shows now: whoever finds your session open cannot move your account to their address.</p>
<div class="actions"><button type="submit">Send a confirmation link</button></div>
</form>
<h2>Your authenticator</h2>
<p>Moving to a new phone or app? Replace the authenticator: a code from the one you have now, then the new key.</p>
${o.reenrolPending ? html`<p class="notice" role="status">A new authenticator is waiting for its first code: <a href="${ACCOUNT_AUTHENTICATOR_PATH}">go on with it</a>.</p>` : ''}
${failureOf(o.failure, 'authenticator')}
${codeForm({ session: o.session, id: 'authenticator-code', action: ACCOUNT_AUTHENTICATOR_PATH, button: 'Replace authenticator', hint: 'The code the app you use now shows. Lost it? Enter one of your recovery codes instead (it is used up).' })}
<h2>Your recovery codes</h2>
<p>New recovery codes replace all the ones you have: the old ones stop working.</p>
${failureOf(o.failure, 'recovery')}
${codeForm({ session: o.session, id: 'recovery-code', action: ACCOUNT_RECOVERY_CODES_PATH, button: 'Make new recovery codes', hint: 'The code your authenticator app shows now (not a recovery code).' })}
${passkeysSection(o)}
<h2>Your sessions</h2>
<p>Each browser where you are signed in to the console. Signing out everywhere ends all of them but this one.</p>
<div class="scroll"><table class="stack">
<caption class="visually-hidden">Your sessions</caption>
<thead><tr><th scope="col">Session</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col">Ends at the latest</th></tr></thead>
<tbody>
${o.sessions.map(
  (s, i) =>
    html`<tr><th scope="row">${here(s) ? 'This browser' : `Another browser (${i + 1})`}</th><td data-label="Signed in">${when(s.signedInAt)}</td><td data-label="Last seen">${when(s.lastSeenAt)}</td><td data-label="Ends at the latest">${when(s.expiresAt)}</td></tr>\n`,
)}</tbody>
</table></div>
<form method="post" action="${ACCOUNT_SESSIONS_PATH}">${csrfField(o.session)}
<div class="actions"><button type="submit"${others === 0 ? html` aria-describedby="no-others"` : ''}>Sign out everywhere else</button></div>
${others === 0 ? html`<p id="no-others" class="hint">You are signed in nowhere else.</p>` : ''}
</form>
<p><a href="${CONSOLE_PATH}">Back to your tenants</a></p>`,
  };
}

/** The answer to a new address asked for: the same whether or not it can become the person's
 *  (another account may have proven it; the page does not say which addresses have accounts). */
export function emailChangeRequested(email: string): string {
  return `If ${email} can be yours, a confirmation link was mailed to it. Open it, signed in as you are now, to use that address. No mail within a few minutes? The address may belong to another account, or a link to it was asked for too often: try again in an hour, or use another address.`;
}

/** The new authenticator's key, until a first code from it confirms it. */
export function reenrolPage(o: { session: Session; secret: TotpSecret; qrSvg: string; failure?: string | undefined }): View {
  return {
    title: 'Your new authenticator',
    body: html`${o.failure ? html`<div class="error" role="alert"><p>${o.failure}</p><p>Correct it and send the form again.</p></div>` : ''}
<p>Scan this code with the new authenticator app, or type the key below into it. Your current authenticator keeps working until you confirm.</p>
<div class="qr" role="img" aria-label="QR code of your new authenticator key">${trusted(o.qrSvg)}</div>
<p>Key: <code>${o.secret.base32.replace(/(.{4})/g, '$1 ').trim()}</code></p>
<form class="fields" method="post" action="${ACCOUNT_AUTHENTICATOR_CONFIRM_PATH}">${csrfField(o.session)}
<label for="code">Code the new app now shows</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus>
<div class="actions"><button type="submit">Confirm new authenticator</button><a href="${ACCOUNT_PATH}">Cancel</a></div>
</form>`,
  };
}

/** The new recovery codes: in the answer to the form that made them, and nowhere else. */
export function recoveryCodesShown(o: { codes: string[]; filename: string; vendor: string }): View {
  return {
    title: 'Your new recovery codes',
    body: html`<div class="warning"><p><strong>Save these codes now: they are shown only on this page.</strong> Your earlier recovery codes no longer work.</p></div>
<p>If you lose your authenticator, each of these codes signs you in once, in place of a code from the app. Keep them somewhere safe, such as your password manager.</p>
<ol class="codes" id="recovery-codes">${o.codes.map((c) => html`<li>${c}</li>`)}</ol>
<div class="actions"><button type="button" class="secondary" data-copy="recovery-codes" hidden>Copy codes</button><button type="button" class="secondary" data-download="recovery-codes" data-filename="${o.filename}" data-heading="${`${o.vendor} recovery codes. Each one signs you in once, in place of a code from your authenticator app.`}" hidden>Download as .txt</button></div>
<p id="recovery-codes-status" class="hint" role="status"></p>
<p><a href="${ACCOUNT_PATH}">I have saved them: back to your account</a></p>`,
  };
}

/** The person's passkeys: a table (name, added, last used, a way to remove each) and the form
 *  that adds one (shown by passkey-script.ts; without the script a sentence says it is needed). */
function passkeysSection(o: {
  session: Session;
  failure?: FormFailure | undefined;
  passkeys?: Passkey[];
  passkeyOptions?: PublicKeyCredentialCreationOptionsJSON | undefined;
}) {
  const passkeys = o.passkeys ?? [];
  return html`<h2 id="passkeys-heading">Your passkeys</h2>
<p>A passkey signs you in with your device's screen lock (fingerprint, face or PIN): after your password in place of a code from your authenticator app, or on its own, without a password.</p>
${failureOf(o.failure, 'passkey')}
${
  passkeys.length === 0
    ? html`<p>You have no passkey.</p>`
    : html`<div class="scroll"><table class="stack">
<caption class="visually-hidden">Your passkeys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${passkeys.map(
  (p) =>
    html`<tr><th scope="row">${p.name}</th><td data-label="Added">${when(p.createdAt)}</td><td data-label="Last used">${when(p.lastUsedAt)}</td><td class="row-actions"><a class="danger-link" href="${ACCOUNT_PASSKEY_REMOVE_PATH}?passkey=${p.id}">Remove<span class="visually-hidden"> ${p.name}</span></a></td></tr>\n`,
)}</tbody>
</table></div>`
}
${
  o.passkeyOptions
    ? html`<h3 id="passkey-add-heading">Add a passkey</h3>
<p class="hint" data-passkey-fallback>Adding a passkey needs JavaScript in this browser.</p>
<form class="fields" method="post" action="${ACCOUNT_PASSKEYS_PATH}" data-passkey="create" data-passkey-options="${JSON.stringify(o.passkeyOptions)}" aria-labelledby="passkey-add-heading" hidden>${csrfField(o.session)}
<label for="passkey-name">Name of the new passkey</label>
<input id="passkey-name" name="name" type="text" maxlength="${PASSKEY_NAME_MAX}" required aria-describedby="passkey-name-hint">
<p id="passkey-name-hint" class="hint">Which device or password manager holds it, such as "Work laptop".</p>
<label for="passkey-code">Code from your authenticator app</label>
<input id="passkey-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required aria-describedby="passkey-code-hint">
<p id="passkey-code-hint" class="hint">A passkey signs you in without a password, so adding one asks for the code your app shows now.</p>
<input type="hidden" name="response">
<div class="actions"><button type="submit">Add a passkey</button></div>
<p class="hint" role="status" data-passkey-status></p>
</form>`
    : ''
}`;
}

/** Asks before a passkey is removed. */
export function removePasskeyConfirmation(o: { session: Session; passkey: Passkey }): View {
  return {
    title: `Remove the passkey ${o.passkey.name}?`,
    body: html`<p>Once removed, it no longer signs you in, with or without your password. To use it again, add it again from your account page.</p>
<dl class="facts">
<dt>Name</dt><dd>${o.passkey.name}</dd>
<dt>Added</dt><dd>${when(o.passkey.createdAt)}</dd>
<dt>Last used</dt><dd>${when(o.passkey.lastUsedAt)}</dd>
</dl>
<form method="post" action="${ACCOUNT_PASSKEY_REMOVE_PATH}">${csrfField(o.session)}<input type="hidden" name="passkey" value="${o.passkey.id}">
<div class="actions"><button type="submit" class="danger">Remove passkey</button><a href="${ACCOUNT_PATH}">Cancel</a></div>
</form>`,
  };
}
