// The security notices and the reset messages as rendered (mail/templates.ts): each notice says
// what changed, when, who, from where, and what to do; what a request sent (its user agent) is
// escaped in the HTML; the passkey notices are ready for the passkeys' use cases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type NoticeTemplate, renderMail } from '../../src/mail/templates.js';

const brand = { product: 'Gatehouse', tenantName: 'Acme' };
const at = new Date('2026-11-28T08:00:00Z');
const ALL: NoticeTemplate[] = [
  'password_changed',
  'totp_changed',
  'recovery_codes_changed',
  'email_changed',
  'device_approved',
  'passkey_added',
  'passkey_removed',
  'sign_in_reset_by_operator',
];

describe('security notices', () => {
  it('each says what changed, when, by whom, from where, and what to do if it was not the person', () => {
    const subjects = new Set<string>();
    for (const template of ALL) {
      const m = renderMail({ template, at, by: 'self', address: '192.0.2.9', userAgent: 'Firefox/140', detail: 'Work laptop' }, brand);
      subjects.add(m.subject);
      assert.match(m.subject, /\(Acme\)$/);
      assert.match(m.text, /When: 2026-11-28 08:00 UTC\. It was done while signed in to your account\./);
      assert.match(m.text, /from the address 192\.0\.2\.9, with "Firefox\/140"/);
      assert.match(
        m.text,
        template === 'sign_in_reset_by_operator'
          ? /If you did not ask for this, tell your administrator of Acme at once/
          : /If this was not you, .*reset your password/,
      );
      assert.doesNotMatch(m.text, /https?:\/\//, 'no link');
    }
    assert.equal(subjects.size, ALL.length, 'a subject of its own for each');
    const passkey = renderMail({ template: 'passkey_added', at, by: 'self', detail: 'Work laptop' }, brand);
    assert.match(passkey.text, /A passkey \(Work laptop\) was added/);
  });

  it('a reset at the command line says an operator did it, and holds no link (the operator was given it)', () => {
    const m = renderMail({ template: 'sign_in_reset_by_operator', at, by: 'operator' }, brand);
    assert.match(m.subject, /^Your sign-in was reset/);
    assert.match(m.text, /It was done by an operator of the service, at its command line\./);
    assert.match(m.text, /A new set-up link was given to the operator who did it, to pass on to you; it is not in this message\./);
    assert.doesNotMatch(m.text, /https?:\/\//);
  });

  it('escapes what the request sent in the HTML', () => {
    const m = renderMail({ template: 'password_changed', at, by: 'reset_link', userAgent: '<script>alert(1)</script>' }, brand);
    assert.ok(!m.html.includes('<script>'));
    assert.match(m.html, /&lt;script&gt;/);
    assert.match(m.text, /with a password reset link/);
  });

  it('the reset link and the mail for an account without a password', () => {
    const link = renderMail({ template: 'password_reset', resetUrl: 'https://id.example/login/reset?token=x', expiresAt: at }, brand);
    assert.match(link.text, /https:\/\/id\.example\/login\/reset\?token=x/);
    assert.match(link.text, /Your authenticator app stays as it is/);
    const sso = renderMail({ template: 'password_reset_unavailable', reason: 'sso' }, brand);
    assert.match(sso.text, /single sign-on/);
    assert.doesNotMatch(sso.text, /https?:\/\//);
  });
});
