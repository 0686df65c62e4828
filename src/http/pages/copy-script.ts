// The copy and download buttons of the pages that show a secret once (a new client secret, the
// recovery codes): the one script of this service, served as a file so that those pages' CSP
// allows scripts from 'self' and nothing inline. The buttons are in the page, `hidden`, and appear
// only when the script runs; without JavaScript the values are still there to select and copy by
// hand.
//
// - `<button type="button" data-copy="ID" hidden>` copies the element with that id: a field's
//   value, or the items of a list one a line.
// - `<button type="button" data-download="ID" data-filename="NAME.txt" data-heading="…" hidden>`
//   saves the same text, under the heading, as a text file: a blob made here and an
//   `<a download>` clicked, so nothing goes back to the server (the values are shown once) and no
//   data: URL is needed.
// Either announces what it did in the element `ID-status` (a live region).
export const COPY_SCRIPT_PATH = '/ui/copy.js';

export const COPY_SCRIPT = `'use strict';
/** The text of a source: a field's value, or a list's items one a line. */
function textOf(source) {
  if (source instanceof HTMLInputElement || source instanceof HTMLTextAreaElement) return source.value;
  return Array.from(source.querySelectorAll('li'), (li) => li.textContent.trim()).join('\\n');
}
function announce(id, message) {
  const status = document.getElementById(id + '-status');
  if (status) status.textContent = message;
}
for (const button of document.querySelectorAll('button[data-copy]')) {
  const id = button.dataset.copy;
  const source = document.getElementById(id);
  if (!source) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    let copied = false;
    try {
      await navigator.clipboard.writeText(textOf(source));
      copied = true;
    } catch {
      // no Clipboard API (a page not served over https): the older way, from a selection
      if (source instanceof HTMLInputElement) source.select();
      else window.getSelection().selectAllChildren(source);
      copied = document.execCommand('copy');
    }
    announce(id, copied ? 'Copied.' : 'Could not copy: select the text and copy it yourself.');
  });
}
for (const button of document.querySelectorAll('button[data-download]')) {
  const id = button.dataset.download;
  const source = document.getElementById(id);
  if (!source) continue;
  const name = button.dataset.filename || 'download.txt';
  button.hidden = false;
  button.addEventListener('click', () => {
    const heading = button.dataset.heading ? button.dataset.heading + '\\n\\n' : '';
    const url = URL.createObjectURL(new Blob([heading + textOf(source) + '\\n'], { type: 'text/plain;charset=utf-8' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = name;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // given time to start the download (some browsers read the blob after the click returns)
    setTimeout(() => URL.revokeObjectURL(url), 30000);
    announce(id, 'Download started: ' + name + '.');
  });
}
`;
