import { unavailable } from "./unavailable";

/** Browser build of the `node:path` functions file storage uses: each throws a message saying it needs Node.js. */
export const dirname = unavailable("path.dirname");
export const join = unavailable("path.join");
export const resolve = unavailable("path.resolve");
