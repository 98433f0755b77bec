/** `node:os` in the browser: only the data-dir lock (its owner's host name) uses it. */
import { unavailable } from "./unavailable";

export const hostname = unavailable("node:os hostname");
