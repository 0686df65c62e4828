// The copy buttons of the pages that show a secret once: the one script of this service, served
// as a file so that those pages' CSP allows scripts from 'self' and nothing inline. A button
// `<button type="button" data-copy="ID" hidden>` appears only when the script runs and copies the
// value of the field with that id (announcing it in the element `ID-status`); without JavaScript
// the field is still there to select and copy by hand.
export const COPY_SCRIPT_PATH = '/ui/copy.js';

export const COPY_SCRIPT = `'use strict';
for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.copy + '-status');
  if (!(field instanceof HTMLInputElement)) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    let copied = false;
    try {
      await navigator.clipboard.writeText(field.value);
      copied = true;
    } catch {
      // no Clipboard API (a page not served over https): the older way, from a selection
      field.select();
      copied = document.execCommand('copy');
    }
    if (status) status.textContent = copied ? 'Copied.' : 'Could not copy: select the text and copy it yourself.';
  });
}
`;
