import { unavailable } from "./unavailable";

/** Browser build of the `node:os` functions file storage uses: each throws a message saying it needs Node.js. */
export const hostname = unavailable("os.hostname");
