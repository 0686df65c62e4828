// Preloaded (node --import) into every process of a planned run (the whole suite, or several files
// or a folder) by scripts/test.mjs.
//
// Node's test runner enables an async hook for the whole run (harness.js, setup()), with an init
// and a destroy callback, to learn which test each asynchronous resource belongs to. With that
// hook on, V8 calls into JavaScript when any promise is created, entered, left and settled, and
// registers every promise for a destroy callback when it is collected: a promise costs about 19
// times as much (docs/benchmarks.md, "The test suite"), and the services under test make promises
// by the million (PGlite, Kysely, Fastify, graphql-js).
//
// What the runner needs from that hook: the test a `describe` or `it` call is made in (its
// Suite or Test, an AsyncResource whose scope the call runs in), and, for an error thrown
// outside any test's own stack, the test to blame. Here the harness is handed a hook that does
// nothing, and learns each of its own resources (Test, Suite) as it is constructed; promises are
// left alone. The one thing lost: an uncaught exception or unhandled rejection raised
// asynchronously inside a test is reported as a top-level failure of the run (exit code 1, "a
// resource generated asynchronous activity...") instead of a failure of that test. The run fails
// either way. One file run by name (npm test -- FILE) gets the runner as it is, with its exact blame.
//
// It applies only when the harness calls createHook as Node 20 to 26 do (from
// internal/test_runner/harness, with init and destroy callbacks), and AsyncResource is the class
// the runner's Test extends; otherwise the runner keeps its own hook.
import asyncHooks from 'node:async_hooks';
import { syncBuiltinESMExports } from 'node:module';

const { createHook, AsyncResource } = asyncHooks;
/** the harness's init callback, once it asked for its hook */
let harnessInit;

asyncHooks.createHook = function createHookUnlessHarness(callbacks) {
  const fromHarness = /internal\/test_runner\/harness/.test(new Error().stack ?? '');
  if (!fromHarness || typeof callbacks?.init !== 'function' || typeof callbacks?.destroy !== 'function') {
    return createHook.call(this, callbacks);
  }
  harnessInit = callbacks.init;
  const hook = {
    enable: () => hook,
    disable: () => hook,
  };
  return hook;
};

asyncHooks.AsyncResource = class TrackedByHarness extends AsyncResource {
  constructor(type, options) {
    super(type, options);
    // the runner's Test and Suite name themselves 'Test'; the harness keeps what is an instance of its Test
    if (harnessInit !== undefined && type === 'Test') harnessInit(this.asyncId(), type, this.triggerAsyncId(), this);
  }
};

// `import { createHook } from 'node:async_hooks'` sees the replacements too
syncBuiltinESMExports();
