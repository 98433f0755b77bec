#!/usr/bin/env node
// Runs the TypeScript sources through tsx, from any working directory.
import { register } from "tsx/esm/api";

register();
const { clusterMirrorMain } = await import("../src/commands/cluster-mirror.ts");
const code = await clusterMirrorMain(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
