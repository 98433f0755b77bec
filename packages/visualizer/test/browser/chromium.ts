/** Where the browser tests look for Chromium, first found wins (`CHROMIUM_PATH` overrides). */
export const CHROMIUM_CANDIDATES = [
  ...(process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : []),
  "/usr/bin/chromium-headless-shell",
  "/usr/lib/chromium/chromium-headless-shell",
  "/usr/bin/chromium",
];
