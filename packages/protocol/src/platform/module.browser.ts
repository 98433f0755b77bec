/**
 * Browser build of `createRequire`: there are no native packages to load, so every `require` throws a
 * message that says so. The callers turn that into their fallback: CRC-32C uses its JavaScript table,
 * compression codecs other than gzip throw `UnsupportedCompressionError` naming the codec.
 */
export function createRequire(_from: string | URL): (id: string) => unknown {
  return (id) => {
    throw new Error(
      `'${id}' cannot load in a browser build: native and WASM packages load through Node.js's require`,
    );
  };
}
