#!/usr/bin/env node
// The image's health check (Dockerfile HEALTHCHECK): GET /readyz on this container's own PORT;
// exit 0 when it answers 200 (the process serves and its database answers), 1 otherwise, within
// 4 s. Node's fetch, since the slim image has no curl.
const port = process.env.PORT || '8080';
fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4000) }).then(
  (res) => process.exit(res.status === 200 ? 0 : 1),
  () => process.exit(1),
);
