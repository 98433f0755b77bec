#!/usr/bin/env node
// Runs the TypeScript sources through tsx, from any working directory (the installed package's bin is
// dist/bin/cluster-mirror.js instead, built from the same src/bin/cluster-mirror.ts).
import { register } from "tsx/esm/api";

register();
await import("../src/bin/cluster-mirror.ts");
