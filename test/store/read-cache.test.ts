// The read-through cache behind the authentication reads: what it keeps, and above all what it
// must not keep (a read that overlapped a change, a miss, anything while changes could go unheard).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChangeSignal } from '../../src/store/auth-changes.js';
import { ReadCache } from '../../src/store/read-cache.js';

function counter(value: () => object | undefined = () => ({ v: 1 })) {
  const state = { reads: 0 };
  const read = async () => {
    state.reads++;
    return value();
  };
  return { state, read };
}

describe('read cache', () => {
  it('keeps a read until the signal moves, then reads again', async () => {
    const signal = new ChangeSignal();
    const cache = new ReadCache<object>(signal, { max: 10, lifetimeMs: 60_000 });
    const { state, read } = counter();
    const first = await cache.get('k', read);
    assert.equal(await cache.get('k', read), first);
    assert.equal(state.reads, 1);
    signal.bump();
    await cache.get('k', read);
    assert.equal(state.reads, 2);
  });

  it('hands out frozen values: no caller can change what the next one gets', async () => {
    const cache = new ReadCache<{ roles: string[] }>(new ChangeSignal(), { max: 10, lifetimeMs: 60_000 });
    await cache.get('k', async () => ({ roles: ['Auditor'] }));
    const cached = (await cache.get('k', async () => undefined))!;
    assert.throws(() => cached.roles.push('Administrator'), TypeError);
  });

  it('does not keep a read that a change overlapped', async () => {
    const signal = new ChangeSignal();
    const cache = new ReadCache<object>(signal, { max: 10, lifetimeMs: 60_000 });
    const { state, read } = counter();
    await cache.get('k', async () => {
      const v = await read();
      signal.bump(); // a write was sent while the read ran
      return v;
    });
    await cache.get('k', read);
    assert.equal(state.reads, 2);
  });

  it('does not keep misses', async () => {
    const cache = new ReadCache<object>(new ChangeSignal(), { max: 10, lifetimeMs: 60_000 });
    const { state, read } = counter(() => undefined);
    assert.equal(await cache.get('k', read), undefined);
    await cache.get('k', read);
    assert.equal(state.reads, 2);
  });

  it('made with `misses`, keeps a miss until the signal moves, apart from the values', async () => {
    const signal = new ChangeSignal();
    const cache = new ReadCache<object>(signal, { max: 1, lifetimeMs: 60_000, misses: 10 });
    const { state, read } = counter(() => undefined);
    assert.equal(await cache.get('k', read), undefined);
    // a value of another key takes the one value place, not the miss's
    await cache.get('other', async () => ({ v: 2 }));
    assert.equal(await cache.get('k', read), undefined);
    assert.equal(state.reads, 1);
    signal.bump();
    assert.deepEqual(await cache.get('k', async () => ({ v: 3 })), { v: 3 });
  });

  it("keeps nothing while other processes' changes could go unheard, and starts afresh when they are heard again", async () => {
    const signal = new ChangeSignal();
    const cache = new ReadCache<object>(signal, { max: 10, lifetimeMs: 60_000 });
    const { state, read } = counter();
    await cache.get('k', read);
    signal.setReliable(false);
    await cache.get('k', read);
    await cache.get('k', read);
    assert.equal(state.reads, 3);
    signal.setReliable(true);
    await cache.get('k', read);
    await cache.get('k', read);
    assert.equal(state.reads, 4);
  });

  it('reads again after its lifetime, whatever the signal says', async () => {
    const cache = new ReadCache<object>(new ChangeSignal(), { max: 10, lifetimeMs: 30 });
    const { state, read } = counter();
    await cache.get('k', read);
    await new Promise((r) => setTimeout(r, 60));
    await cache.get('k', read);
    assert.equal(state.reads, 2);
  });

  it('concurrent misses of one key share one read', async () => {
    const cache = new ReadCache<object>(new ChangeSignal(), { max: 10, lifetimeMs: 60_000 });
    const { state, read } = counter();
    const all = await Promise.all(Array.from({ length: 5 }, () => cache.get('k', read)));
    assert.equal(state.reads, 1);
    assert.ok(all.every((v) => v === all[0]));
  });
});
