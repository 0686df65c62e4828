#!/usr/bin/env node
// The installed executable: runs the compiled CLI (built by `npm ci` through the prepare script).

// `serve` runs in production mode unless the environment says otherwise. Of Gatehouse's
// dependencies only graphql-js reads it, once, when it is loaded: in any other mode every type
// check of its executor also looks for a second copy of graphql-js (a mistake of development
// set-ups), about a twentieth of a `clients` query's CPU (docs/performance.md). So it is set
// before the CLI is imported; other commands (and what they start) are left as they were.
if (process.argv.slice(2).includes('serve')) process.env.NODE_ENV ??= 'production';
const { failureLine } = await import('../dist/cli/failure-line.js');
const { main } = await import('../dist/cli/main.js');

// A finished command must end the process even if something it used left a handle open (a
// socket, a timer): the exit code is set, and a timer that does not itself keep the process
// alive forces the exit if anything else still does.
const FORCED_EXIT_MS = 1_000;

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = typeof code === 'number' ? code : 0;
    setTimeout(() => process.exit(), FORCED_EXIT_MS).unref();
  },
  (err) => {
    process.stderr.write(`gatehouse: ${failureLine(err)}\n`);
    process.exit(1);
  },
);
