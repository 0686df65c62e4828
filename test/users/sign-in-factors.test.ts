// The rules of the sign-in factors, without storage: the password policy (NIST SP 800-63B), TOTP
// codes (RFC 6238) with drift and replay refusal, and recovery codes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PASSWORD_MAX, PASSWORD_MIN, passwordProblem } from '../../src/users/password-policy.js';
import { canonicalRecoveryCode, hashRecoveryCode, newRecoveryCodes, RECOVERY_CODE_COUNT } from '../../src/users/recovery-codes.js';
import { acceptTotp, newTotpSecret, TOTP_PERIOD_SECONDS, totpCodeAt } from '../../src/users/totp.js';

describe('password policy', () => {
  it('accepts long passwords of any composition, and passphrases with spaces and any script', () => {
    for (const ok of [
      'correct horse battery staple',
      'lowercaseonlybutlong',
      'пароль-достаточно-длинный',
      '😀😀😀😀 emoji works too',
      'a'.repeat(5) + 'b'.repeat(7),
    ]) {
      assert.equal(passwordProblem(ok), undefined, ok);
    }
  });

  it(`refuses fewer than ${PASSWORD_MIN} characters (counted as characters, not bytes) and more than ${PASSWORD_MAX}`, () => {
    assert.match(passwordProblem('short-pass1')!, /at least 12 characters/);
    const emoji = [...'😀😁😂🤣😃😄😅😆😉😊😋😎'];
    assert.match(passwordProblem(emoji.slice(0, 11).join(''))!, /at least 12/, '11 emoji are 22 UTF-16 units but 11 characters');
    assert.equal(passwordProblem(emoji.join('')), undefined);
    assert.match(passwordProblem('x'.repeat(PASSWORD_MAX) + 'y')!, /at most 256/);
  });

  it('refuses common passwords in any case, one repeated character, and the account name', () => {
    assert.match(passwordProblem('password1234')!, /most common/);
    assert.match(passwordProblem('QWERTY123456')!, /most common/);
    assert.match(passwordProblem('aaaaaaaaaaaaaaaa')!, /repeated character/);
    assert.match(passwordProblem('ada.lovelace@example.com', ['ada.lovelace@example.com', 'ada.lovelace'])!, /e-mail address/);
    assert.match(passwordProblem('my Ada.Lovelace secret', ['ada.lovelace'])!, /e-mail address/);
  });
});

describe('TOTP', () => {
  const t0 = new Date('2026-11-23T12:00:10Z');
  const { base32, uri } = newTotpSecret('ada@example.com', 'Gatehouse');

  it('makes a 160-bit secret and an otpauth URI an authenticator app reads', () => {
    assert.match(base32, /^[A-Z2-7]{32}$/);
    const u = new URL(uri);
    assert.equal(u.protocol, 'otpauth:');
    assert.equal(u.searchParams.get('secret'), base32);
    assert.equal(u.searchParams.get('issuer'), 'Gatehouse');
    assert.match(decodeURIComponent(u.pathname), /ada@example\.com/);
  });

  it('accepts the code of now and of one step either side, with spaces or a dash, and no other', () => {
    const step = Math.floor(t0.getTime() / 1000 / TOTP_PERIOD_SECONDS);
    assert.equal(acceptTotp(base32, totpCodeAt(base32, t0), t0, null), step);
    const code = totpCodeAt(base32, t0);
    assert.equal(acceptTotp(base32, `${code.slice(0, 3)} ${code.slice(3)}`, t0, null), step);
    assert.equal(acceptTotp(base32, `${code.slice(0, 3)}-${code.slice(3)}`, t0, null), step);
    const prev = new Date(t0.getTime() - TOTP_PERIOD_SECONDS * 1000);
    assert.equal(acceptTotp(base32, totpCodeAt(base32, prev), t0, null), step - 1);
    const twoBack = new Date(t0.getTime() - 2 * TOTP_PERIOD_SECONDS * 1000);
    assert.equal(acceptTotp(base32, totpCodeAt(base32, twoBack), t0, null), undefined);
    // ahead, as a phone whose clock runs fast shows it: one step is accepted, two are not
    const next = new Date(t0.getTime() + TOTP_PERIOD_SECONDS * 1000);
    assert.equal(acceptTotp(base32, totpCodeAt(base32, next), t0, null), step + 1);
    const twoAhead = new Date(t0.getTime() + 2 * TOTP_PERIOD_SECONDS * 1000);
    assert.equal(acceptTotp(base32, totpCodeAt(base32, twoAhead), t0, null), undefined);
    assert.equal(acceptTotp(base32, '12345', t0, null), undefined);
    assert.equal(acceptTotp(base32, 'abcdef', t0, null), undefined);
  });

  it('refuses a code of a step already used, or older, so a code works once', () => {
    const code = totpCodeAt(base32, t0);
    const step = acceptTotp(base32, code, t0, null)!;
    assert.equal(acceptTotp(base32, code, t0, step), undefined, 'the same code again');
    const prev = new Date(t0.getTime() - TOTP_PERIOD_SECONDS * 1000);
    assert.equal(acceptTotp(base32, totpCodeAt(base32, prev), t0, step), undefined, 'an older code after a newer one');
    const next = new Date(t0.getTime() + TOTP_PERIOD_SECONDS * 1000);
    assert.equal(acceptTotp(base32, totpCodeAt(base32, next), next, step), step + 1, 'the next step works');
  });
});

describe('recovery codes', () => {
  it(`makes ${RECOVERY_CODE_COUNT} distinct readable codes`, () => {
    const codes = newRecoveryCodes();
    assert.equal(codes.length, RECOVERY_CODE_COUNT);
    assert.equal(new Set(codes).size, RECOVERY_CODE_COUNT);
    for (const c of codes) assert.match(c, /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{4}$/);
  });

  it('reads a typed code forgivingly (case, spaces, dashes, O for 0, I and L for 1) and refuses other text', () => {
    const [code] = newRecoveryCodes();
    const typed = code!.toUpperCase().replace(/-/g, ' ').replace(/0/g, 'O').replace(/1/g, 'l');
    assert.deepEqual(hashRecoveryCode(typed), hashRecoveryCode(code!));
    assert.equal(canonicalRecoveryCode('too-short'), undefined);
    assert.equal(canonicalRecoveryCode(`${code}x`), undefined);
    assert.equal(canonicalRecoveryCode('uuuuu-uuuuu-uuuu'), undefined, 'U is not in the alphabet');
  });
});
