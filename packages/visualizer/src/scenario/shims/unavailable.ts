/** A function that says it cannot run in the browser (file-backed storage, native codecs). */
export function unavailable(what: string): (...args: unknown[]) => never {
  return () => {
    throw new Error(
      `${what} is not available in the browser (the scenario runner keeps everything in memory)`,
    );
  };
}
