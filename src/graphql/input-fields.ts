// A resolver that hands an argument list or an input object to a service whole (not field by
// field) is where a field renamed in the SDL would still compile: the service's input type has
// optional fields, so the renamed one would just go missing. `Matches<SameFields<Wire, Service>>`
// compiles only when the generated wire type and the service's input type name the same fields, at
// every depth of nested input objects and lists; otherwise the error names the fields that differ.

type Leaf = string | number | boolean | bigint | Date;

/** A field's value type without null, undefined and list wrapping. */
type Inner<T> = T extends readonly (infer E)[] ? Inner<E> : Exclude<T, null | undefined>;

/** Names of fields one side has and the other lacks, at any depth. */
type Differ<W, S> = [Inner<W>] extends [Leaf]
  ? never
  : [Inner<S>] extends [Leaf]
    ? never
    :
        | Exclude<keyof Inner<W>, keyof Inner<S>>
        | Exclude<keyof Inner<S>, keyof Inner<W>>
        | { [K in keyof Inner<W> & keyof Inner<S>]-?: Differ<Inner<W>[K], Inner<S>[K]> }[keyof Inner<W> & keyof Inner<S>];

/** `true` when both types name the same fields at every depth; else the names that differ. */
export type SameFields<Wire, Service> = [Differ<Wire, Service>] extends [never] ? true : Differ<Wire, Service>;

/** Fails to compile unless its argument is `true`. */
export type Matches<T extends true> = T;
