// Package versions as the dependency-floor tests compare them.

/** Compares x.y.z versions; a pre-release (x.y.z-rc) counts as below its release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.split('-', 2);
    return [...core.split('.').map(Number), pre === undefined ? 1 : 0];
  };
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
