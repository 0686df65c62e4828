#!/usr/bin/env node
// The installed executable: runs the compiled CLI (built by `npm ci` through the prepare script).
import { failureLine } from '../dist/cli/failure-line.js';
import { main } from '../dist/cli/main.js';

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
