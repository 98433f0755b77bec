/**
 * Placeholder implementation of a named effect: the machines only name their effects; the runtime provides
 * them (`machine.provide({ actions })`) or runs the actions the pure `transition()` returns. `P` types the
 * parameters the chart passes.
 */
export function effect<P>(): (args: unknown, params: P) => void {
  return () => {};
}
