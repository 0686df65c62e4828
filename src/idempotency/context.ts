// The key of the request being run, for the persister's transactions: a transaction that commits
// while a keyed request runs marks its key `committed` in that same transaction (store/index.ts),
// so "the change was made" is never known without the change, nor the other way round. An
// AsyncLocalStorage, so that the use cases need not know.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface KeyedRequest {
  caller: string;
  key: string;
  /** this request's claim of the key (KeyClaim.claimId) */
  claimId: string;
  /** set once a transaction of the request has committed */
  committed: boolean;
}

const current = new AsyncLocalStorage<KeyedRequest>();

export function runKeyed<T>(request: KeyedRequest, fn: () => Promise<T>): Promise<T> {
  return current.run(request, fn);
}

/** The keyed request this code runs for, if any. */
export function keyedRequest(): KeyedRequest | undefined {
  return current.getStore();
}
