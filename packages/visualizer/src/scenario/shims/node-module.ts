/** `node:module` in the browser: native codecs (snappy, lz4, aws-crt) fail to load, so the JS fallbacks run. */
import { unavailable } from "./unavailable";

export function createRequire(_url: string): (name: string) => never {
  return (name: string) => unavailable(`the native module '${name}'`)();
}
