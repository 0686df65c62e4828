// /metrics through the executable, as CONTRACT.md fixes it: never on the public listener; with
// GATEHOUSE_METRICS_PORT, on that port only, counting the public listener's requests.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, freePort, gatehouse, get, killAll, migratedDataDir, stop, waitHealthy } from '../helpers/cli.js';

describe('metrics listener (gatehouse executable)', () => {
  let tmp: string;
  let dataDir: string;
  before(async () => {
    ensureBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-metrics-'));
    dataDir = await migratedDataDir(join(tmp, 'data'));
  });
  after(async () => {
    await killAll();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('without GATEHOUSE_METRICS_PORT, /metrics is served nowhere', async () => {
    const port = await freePort();
    const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
    await waitHealthy(p, port);
    const res = await get(port, '/metrics');
    assert.equal(res?.status, 404);
    assert.doesNotMatch(res!.text, /gatehouse_http_request_duration_seconds/);
    await stop(p);
  });

  it('with GATEHOUSE_METRICS_PORT, /metrics is served on that port only and counts the public requests', async () => {
    const port = await freePort();
    const metricsPort = await freePort();
    const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port), GATEHOUSE_METRICS_PORT: String(metricsPort) });
    await waitHealthy(p, port);
    for (let i = 0; i < 3; i++) assert.equal((await get(port, '/healthz'))?.status, 200);
    const pub = await get(port, '/metrics');
    assert.equal(pub?.status, 404, 'not on the public listener');
    assert.doesNotMatch(pub!.text, /gatehouse_http_request_duration_seconds/);

    const scrape = await get(metricsPort, '/metrics');
    assert.equal(scrape?.status, 200);
    const m = /^gatehouse_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} (\d+)$/m.exec(scrape!.text);
    assert.ok(m && Number(m[1]) >= 3, `the public /healthz requests are counted:\n${scrape!.text.slice(0, 2000)}`);
    assert.doesNotMatch(scrape!.text, /route="\/metrics"/, 'scrapes are not counted as public requests');
    assert.equal((await get(metricsPort, '/healthz'))?.status, 404, 'the metrics port serves nothing else');
    await stop(p);
    assert.equal(await get(metricsPort, '/metrics'), undefined, 'the metrics listener closes on stop');
  });
});
