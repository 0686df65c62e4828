// `gatehouse login --open`: the verification page in the default browser. The page's address comes
// from the server, so only an http(s) address on the server the user named is handed to the
// platform's opener; anything else is left for the person to judge, with a warning.
import { spawn } from 'node:child_process';
import { printable } from './printable.js';

/** Why the page must not be opened automatically, or undefined when it may be: it must be http(s)
 *  and on the same origin as the server the user gave (`base`). */
export function refusalToOpen(page: string, base: string): string | undefined {
  let url: URL;
  try {
    url = new URL(page);
  } catch {
    return 'it is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `it is not an http(s) address (${printable(url.protocol)})`;
  const origin = new URL(base).origin;
  if (url.origin !== origin) return `it is not on ${origin}`;
  return undefined;
}

/** Opens the page if refusalToOpen allows it; a failure only means the person opens it. */
export function openPage(page: string, base: string): void {
  const refusal = refusalToOpen(page, base);
  if (refusal) {
    process.stderr.write(`warning: not opening the page the server named, as ${refusal}; open it yourself only if you trust it\n`);
    return;
  }
  const url = new URL(page).href;
  // Windows: rundll32 takes the address as one argument; `cmd /c start` would parse it as a command line
  const [command, ...args] =
    process.platform === 'darwin'
      ? ['open', url]
      : process.platform === 'win32'
        ? ['rundll32', 'url.dll,FileProtocolHandler', url]
        : ['xdg-open', url];
  const failed = () => process.stderr.write('could not open a browser; open the page above yourself\n');
  try {
    const child = spawn(command!, args, { stdio: 'ignore', detached: true });
    child.on('error', failed);
    child.unref();
  } catch {
    failed();
  }
}
