// The HTML of the person's own account page (account.ts): their password and their sessions.
import type { Session } from '../../../sessions/model.js';
import { html } from '../html.js';
import { csrfField } from '../page-kit.js';
import { noticeOf, type View, when } from './layout.js';
import { ACCOUNT_PASSWORD_PATH, ACCOUNT_SESSIONS_PATH, CONSOLE_PATH } from './paths.js';

/** A refusal of the password form, above it. */
export interface FormFailure {
  message: string;
}

export function accountPage(o: {
  session: Session;
  email: string;
  sessions: Session[];
  notice?: string | undefined;
  passwordFailure?: FormFailure | undefined;
}): View {
  const here = (s: Session) => s.idHash.equals(o.session.idHash);
  const others = o.sessions.filter((s) => !here(s)).length;
  const failure = o.passwordFailure
    ? html`<div class="error" role="alert"><p>${o.passwordFailure.message}</p><p>Correct it and send the form again.</p></div>`
    : '';
  return {
    title: 'Your account',
    body: html`${noticeOf(o.notice)}
<p class="lead">Signed in as <strong>${o.email}</strong>.</p>
<h2 id="password-heading">Change your password</h2>
${failure}
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
