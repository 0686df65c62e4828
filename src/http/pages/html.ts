// Server-rendered pages: HTML built from tagged templates that escape every interpolated value
// unless it is already Html (made here). Every page works without JavaScript, and the
// Content-Security-Policy forbids scripts; the one exception is a page that shows a secret, which
// loads the copy-button script from this service (copy-script.ts).

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < parts.length ? render(parts[i]) : ''), ''));
}

/** Markup made elsewhere by a trusted generator (the QR code's SVG). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

export const STYLESHEET_PATH = '/ui/gatehouse.css';

/** How a page departs from the narrow sign-in column. */
export interface PageOptions {
  /** a wide column (tables) */
  wide?: boolean;
  /** navigation shown above the title */
  nav?: Html;
  /** scripts of this service, loaded deferred (the page's CSP must allow them) */
  scripts?: readonly string[];
  /** a path of this service the browser goes on to by itself (meta refresh: no script needed) */
  refreshTo?: string;
}

/** The page shell: one column, the service's name (and region: each region is a deployment of its
 *  own, whose accounts and sessions are its own), the content. */
export function page(title: string, body: Html, opts: { vendor: string; region?: string } & PageOptions): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${opts.vendor}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${
  opts.refreshTo
    ? html`<meta http-equiv="refresh" content="0;url=${opts.refreshTo}">
`
    : ''
}${(opts.scripts ?? []).map(
  (src) => html`<script src="${src}" defer></script>
`,
)}</head>
<body>
<main${opts.wide ? html` class="wide"` : ''}>
${
  opts.nav
    ? html`<a class="skip" href="#content">Skip to the page’s content</a>
`
    : ''
}<p class="brand">${opts.vendor}${opts.region ? html` · region ${opts.region}` : ''}</p>
${
  opts.nav
    ? html`${opts.nav}<div id="content" tabindex="-1"><h1>${title}</h1>
${body}
</div>`
    : html`<h1>${title}</h1>
${body}`
}
</main>
</body>
</html>
`}`;
}

export const STYLESHEET = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4b5563; --line: #c7ccd3; --accent: #1f4fd1; --bad: #a11d1d; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f5f6f8; }
main { max-width: 28rem; margin: 4rem auto; padding: 2rem; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
a, a:visited { color: var(--accent); }
.brand { margin: 0 0 .5rem; color: var(--muted); font-size: .9rem; letter-spacing: .02em; }
h1 { margin: 0 0 1.25rem; font-size: 1.4rem; }
/* a title, a crumb or an address may be one long word (an e-mail address): it breaks rather than widen the page */
h1, h2, .crumbs li, .account strong { overflow-wrap: anywhere; min-width: 0; }
label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
input[type=email], input[type=password], input[type=text] { width: 100%; padding: .6rem .7rem; font: inherit; border: 1px solid #8a919b; border-radius: 6px; }
input:focus, button:focus, a:focus-visible { outline: 3px solid #1f4fd1; outline-offset: 2px; }
button { margin-top: 1.25rem; padding: .6rem 1.1rem; font: inherit; font-weight: 600; color: #fff; background: var(--accent); border: 0; border-radius: 6px; cursor: pointer; }
button.link { background: none; color: var(--accent); padding: 0; margin: 0; font-weight: 400; text-decoration: underline; }
button + button.link { margin-left: 1.5rem; }
button.secondary { color: var(--accent); background: #fff; border: 1px solid var(--accent); }
.usercode { font-size: 1.3rem; letter-spacing: .08em; }
.error { color: var(--bad); border-left: 4px solid var(--bad); padding: .25rem .75rem; background: #fdf2f2; }
.hint { color: var(--muted); font-size: .9rem; }
/* a field's hint sits under it, close to it */
:is(input, select, textarea, .inline, .copyable) + .hint { margin-top: .35rem; }
.qr svg { width: 12rem; height: 12rem; display: block; margin: .5rem 0; }
code, .codes, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
/* recovery codes (16 characters): the second column's numbers sit in the gap, so two columns only where both fit whole */
.codes { columns: 2 16ch; column-gap: 5ch; margin: 1rem 0; padding-left: 4ch; font-size: .95rem; }
.codes li { white-space: nowrap; break-inside: avoid; }
main.wide { max-width: 76rem; }
.wide a:focus-visible, select:focus, input[type=checkbox]:focus-visible { outline: 3px solid #1f4fd1; outline-offset: 2px; }
.bar { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: .5rem 1.5rem; margin: 0 0 1.25rem; padding-bottom: .75rem; border-bottom: 1px solid var(--line); font-size: .95rem; }
.crumbs { display: flex; flex-wrap: wrap; list-style: none; margin: 0; padding: 0; }
.crumbs li + li::before { content: "›"; margin: 0 .5rem; color: var(--muted); }
/* in a tenant's pages the last crumb is the tenant the person acts in: in ink, bold */
.crumbs.in-tenant li:last-child a { color: var(--ink); font-weight: 600; }
.sections ul { display: flex; flex-wrap: wrap; gap: .25rem 1.5rem; list-style: none; margin: -.5rem 0 1.25rem; padding: 0 0 .5rem; border-bottom: 1px solid var(--line); }
.sections a { display: inline-block; padding: .25rem 0; text-decoration: none; }
.sections a[aria-current=page] { color: var(--ink); font-weight: 600; border-bottom: 3px solid var(--accent); }
.account { display: flex; flex-wrap: wrap; align-items: baseline; gap: .25rem 1rem; margin: 0; color: var(--muted); }
.scroll { position: relative; overflow-x: auto; margin: .75rem 0 1.5rem; }
table { width: 100%; border-collapse: collapse; font-size: .95rem; }
caption { text-align: left; font-weight: 600; padding-bottom: .5rem; }
td time { white-space: nowrap; }
td:has(> .details) { min-width: 18rem; }
th, td { text-align: left; vertical-align: top; padding: .55rem 1rem .55rem 0; border-bottom: 1px solid var(--line); }
thead th { color: var(--muted); font-size: .85rem; white-space: nowrap; border-bottom: 2px solid var(--line); }
td code { font-size: .9rem; }
.row-actions { white-space: nowrap; }
.row-actions a + a { margin-left: 1rem; }
.filters { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: 0 1.25rem; margin-bottom: 1rem; }
.filters label { margin-top: .75rem; }
.filters .actions { grid-column: 1 / -1; margin-top: 1rem; }
.filters .hint { margin: .25rem 0 0; }
.details { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 .75rem; margin: 0; font-size: .85rem; }
.details dt { color: var(--muted); }
.details dd { margin: 0; overflow-wrap: anywhere; }
.outcome-failure, .outcome-refused { color: var(--bad); font-weight: 600; font-size: .85rem; }
.secrets { list-style: none; margin: 0; padding: 0; }
.secrets li + li { margin-top: .25rem; }
a.button { display: inline-block; padding: .6rem 1.1rem; font-weight: 600; color: #fff; background: var(--accent); border-radius: 6px; text-decoration: none; }
.actions { display: flex; flex-wrap: wrap; align-items: center; gap: 1.5rem; margin-top: 1.5rem; }
.actions button { margin: 0; }
button.danger { background: var(--bad); }
form.fields { max-width: 30rem; }
fieldset { margin: 1.25rem 0 0; padding: .25rem 1rem .75rem; border: 1px solid var(--line); border-radius: 6px; }
legend { font-weight: 600; padding: 0 .25rem; }
.choice { display: flex; align-items: center; gap: .6rem; margin: .4rem 0; }
.choice label { display: inline; margin: 0; font-weight: 400; }
input[type=checkbox] { width: 1.1rem; height: 1.1rem; margin: 0; accent-color: var(--accent); }
select { display: block; width: 100%; padding: .55rem .7rem; font: inherit; color: inherit; background: #fff; border: 1px solid #8a919b; border-radius: 6px; }
input[type=search] { width: 100%; padding: .6rem .7rem; font: inherit; border: 1px solid #8a919b; border-radius: 6px; }
.inline, .copyable { display: flex; gap: .5rem; align-items: stretch; }
.inline button, .copyable button { margin: 0; white-space: nowrap; }
.copyable { max-width: 50rem; flex-wrap: wrap; }
.copyable input[type=text] { flex: 1 1 16rem; min-width: 0; }
.copyable button { min-width: 9.5rem; }
input.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .95rem; }
.notice { border-left: 4px solid #1a7f37; background: #edf7ef; padding: .5rem .75rem; }
.warning { border-left: 4px solid #9a6700; background: #fff8e1; padding: .1rem .75rem; }
.warning p { margin: .5rem 0; }
.error p { margin: .25rem 0; }
.lead { margin-top: 0; }
.pager { display: flex; gap: 1.5rem; align-items: baseline; }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .35rem 1.25rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.skip { position: absolute; left: -999rem; }
.skip:focus { position: static; display: inline-block; margin: 0 0 .5rem; }
#content:focus { outline: none; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
/* a phone: the page fills the screen, and a table of class stack shows each row as a block, its cells labelled (data-label) */
@media (max-width: 32rem) {
  main { margin: 0 auto; padding: 1.25rem 1rem 2rem; border-width: 0 0 1px; border-radius: 0; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.stack tr { display: block; padding: .6rem 0; border-bottom: 1px solid var(--line); }
  table.stack th, table.stack td { display: block; padding: .1rem 0; border: 0; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  table.stack .row-actions { padding-top: .35rem; }
}
/* single sign-on (console/sso*.ts): pasted values and certificates, lists with a remove button each, the wizard's instructions */
textarea { display: block; width: 100%; padding: .6rem .7rem; font: inherit; border: 1px solid #8a919b; border-radius: 6px; }
textarea.mono { font-size: .85rem; }
input[type=url] { width: 100%; padding: .6rem .7rem; font: inherit; border: 1px solid #8a919b; border-radius: 6px; }
input[type=radio] { width: 1.1rem; height: 1.1rem; margin: 0; accent-color: var(--accent); }
textarea:focus, input[type=radio]:focus-visible { outline: 3px solid #1f4fd1; outline-offset: 2px; }
ul.values { list-style: none; padding: 0; margin: .5rem 0; }
ul.values li { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: baseline; padding: .3rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.expiry { color: #7a4f00; font-weight: 600; }
details { margin: .75rem 0; padding: .25rem .75rem; border: 1px solid var(--line); border-radius: 6px; }
summary { cursor: pointer; font-weight: 600; padding: .25rem 0; }
summary:focus-visible { outline: 3px solid #1f4fd1; outline-offset: 2px; }
details ol { padding-left: 1.25rem; }
section { margin-top: 2rem; }
/* a heading opens a part of the page: space above it, less below (tables and forms follow it) */
h2 { font-size: 1.15rem; margin: 2rem 0 .75rem; }
section > h2:first-child, h1 + h2 { margin-top: 0; }
a.danger-link, a.danger-link:visited { color: var(--bad); }
.cert-check { margin: .75rem 0; padding-top: .5rem; border-top: 1px solid var(--line); }
.cert-check dd code { font-size: .8rem; }
/* users (console/users-views.ts): the list's filters side by side where they fit; forms that are one button */
.users-filter { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: .5rem 1rem; align-items: end; margin: 1rem 0; }
.users-filter label { margin-top: 0; }
.users-filter button { margin: 0; }
.users-filter input { padding: .55rem .7rem; }
.users-filter .hint { grid-column: 1 / -1; margin: 0; }
a.button.danger { background: var(--bad); }
.actions form, .row-actions form { display: inline; margin: 0; }
.actions-list { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; list-style: none; padding: 0; }
.search-form .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .25rem 1rem; }
.search-form .grid > div { min-width: 0; }
.inline-form { display: flex; flex-wrap: wrap; gap: .25rem .5rem; align-items: center; margin-bottom: .35rem; }
.inline-form input[type=text] { width: 10rem; min-width: 0; }
.inline-form label { margin: 0; }
.inline-form button { margin: 0; }
/* a row's own form in a table (a label's name and value): label beside field, the button under the fields */
td .inline-form { display: grid; grid-template-columns: max-content 10rem; gap: .35rem .6rem; align-items: center; }
td .inline-form input[type=text] { width: 100%; }
td .inline-form label { font-weight: 400; }
td .inline-form button { grid-column: 2; justify-self: start; }
.row-forms { display: flex; flex-wrap: wrap; align-items: flex-end; gap: .5rem; white-space: normal; }
.row-forms > form { margin: 0; }
/* times and numbers typed in forms (the audit filters, a role's end, support access's end) */
input[type=datetime-local], input[type=number] { display: block; width: 100%; max-width: 16rem; padding: .55rem .7rem; font: inherit; border: 1px solid #8a919b; border-radius: 6px; }
textarea:focus, select:focus { outline: 3px solid #1f4fd1; outline-offset: 2px; }
details > summary { margin: 0; padding: .4rem 0; cursor: pointer; color: var(--accent); font-weight: 600; }
details[open] > summary { margin-bottom: .5rem; border-bottom: 1px solid var(--line); }
@media (max-width: 32rem) {
  .tenant-facts { grid-template-columns: minmax(0, 1fr); gap: 0; }
  .tenant-facts dd { margin-bottom: .6rem; }
}
`;
