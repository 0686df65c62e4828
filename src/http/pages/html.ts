// Server-rendered pages: HTML built from tagged templates that escape every interpolated value
// unless it is already Html (made here). No script anywhere: the pages work without JavaScript,
// and the Content-Security-Policy forbids it.

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

/** The page shell: one column, the service's name, the content. */
export function page(title: string, body: Html, opts: { vendor: string }): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${opts.vendor}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<main>
<p class="brand">${opts.vendor}</p>
<h1>${title}</h1>
${body}
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
.brand { margin: 0 0 .5rem; color: var(--muted); font-size: .9rem; letter-spacing: .02em; }
h1 { margin: 0 0 1.25rem; font-size: 1.4rem; }
label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
input[type=email], input[type=password], input[type=text] { width: 100%; padding: .6rem .7rem; font: inherit; border: 1px solid #8a919b; border-radius: 6px; }
input:focus, button:focus { outline: 3px solid #8fb0ff; outline-offset: 1px; }
button { margin-top: 1.25rem; padding: .6rem 1.1rem; font: inherit; font-weight: 600; color: #fff; background: var(--accent); border: 0; border-radius: 6px; cursor: pointer; }
button.link { background: none; color: var(--accent); padding: 0; margin: 0; font-weight: 400; text-decoration: underline; }
button + button.link { margin-left: 1.5rem; }
.usercode { font-size: 1.3rem; letter-spacing: .08em; }
.error { color: var(--bad); border-left: 4px solid var(--bad); padding: .25rem .75rem; background: #fdf2f2; }
.hint { color: var(--muted); font-size: .9rem; }
.qr svg { width: 12rem; height: 12rem; display: block; margin: .5rem 0; }
code, .codes { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.codes { columns: 2; padding-left: 1.25rem; }
`;
