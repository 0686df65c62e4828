// How a use case asks for several store calls to succeed or fail together, without knowing the
// persister: a capability declares the stores it needs (its store.ts) and receives them as
// Transactional<ItsStores>. The function given to `transaction` gets the same stores bound to one
// database transaction; all its writes commit together or none do.
export type Transactional<Stores> = Stores & {
  transaction<T>(fn: (tx: Stores) => Promise<T>): Promise<T>;
};
