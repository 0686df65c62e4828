// The passkey buttons (docs/users.md "Passkeys"): the one place where a page needs a script, to
// call WebAuthn (navigator.credentials.create/get), which has no HTML form of its own. Served as
// a file (assets.ts) so that the pages' CSP allows scripts from 'self' only, nothing inline; it
// writes only text and form values (Trusted Types: no HTML sink). No request of its own either
// (the CSP has no connect-src): the options come in the form's `data-passkey-options` (the JSON
// the service made, base64url), and the browser's answer goes back as JSON in the form's hidden
// `response` field, posted as any form is, with the session's CSRF token.
//
// - `<form data-passkey="create|get" data-passkey-options="{…}" hidden>` with an
//   `<input type="hidden" name="response">`: shown when the browser has WebAuthn; its submit asks
//   the browser for a passkey (a new one: create; an existing one: get) and posts the answer.
// - `[data-passkey-status]` inside it: what went wrong, in words (a live region).
// - `[data-passkey-fallback]` anywhere: shown only without this script (hidden once it runs).
// Without the script nothing else on a page changes: the password and code forms work as ever.
export const PASSKEY_SCRIPT_PATH = '/ui/passkey.js';

export const PASSKEY_SCRIPT = `'use strict';
function toBuffer(text) {
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes.buffer;
}
function toText(buffer) {
  let bin = '';
  for (const b of new Uint8Array(buffer)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
}
function withIds(list) {
  return (list || []).map((c) => Object.assign({}, c, { id: toBuffer(c.id) }));
}
function publicKeyOptions(kind, o) {
  if (kind === 'create') {
    return Object.assign({}, o, { challenge: toBuffer(o.challenge), user: Object.assign({}, o.user, { id: toBuffer(o.user.id) }), excludeCredentials: withIds(o.excludeCredentials) });
  }
  return Object.assign({}, o, { challenge: toBuffer(o.challenge), allowCredentials: withIds(o.allowCredentials) });
}
function answerOf(credential) {
  const r = credential.response;
  const response = { clientDataJSON: toText(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toText(r.attestationObject);
    response.transports = typeof r.getTransports === 'function' ? r.getTransports() : [];
  } else {
    response.authenticatorData = toText(r.authenticatorData);
    response.signature = toText(r.signature);
    if (r.userHandle) response.userHandle = toText(r.userHandle);
  }
  return JSON.stringify({
    id: credential.id,
    rawId: toText(credential.rawId),
    type: credential.type,
    response: response,
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: credential.authenticatorAttachment || undefined,
  });
}
function wordsFor(error) {
  if (error && error.name === 'InvalidStateError') return 'This passkey is registered already on this account.';
  if (error && error.name === 'NotAllowedError') return 'No passkey was used: it was cancelled, or the time ran out. Try again.';
  if (error && error.name === 'SecurityError') return 'This browser refused passkeys for this address.';
  return 'The passkey could not be used: ' + (error && error.message ? error.message : 'unknown error') + '.';
}
if (window.PublicKeyCredential && navigator.credentials) {
  for (const note of document.querySelectorAll('[data-passkey-fallback]')) note.hidden = true;
  for (const form of document.querySelectorAll('form[data-passkey]')) {
    const kind = form.dataset.passkey === 'create' ? 'create' : 'get';
    let options;
    try {
      options = JSON.parse(form.dataset.passkeyOptions || '');
    } catch {
      continue;
    }
    const status = form.querySelector('[data-passkey-status]');
    const field = form.querySelector('input[name="response"]');
    if (!field) continue;
    form.hidden = false;
    let busy = false;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (busy) return;
      if (!form.reportValidity()) return;
      busy = true;
      if (status) status.textContent = '';
      try {
        const credential = await navigator.credentials[kind]({ publicKey: publicKeyOptions(kind, options) });
        field.value = answerOf(credential);
        form.submit();
      } catch (error) {
        busy = false;
        if (status) status.textContent = wordsFor(error);
      }
    });
  }
}
`;
