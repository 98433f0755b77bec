#!/usr/bin/env node
// The `cluster-mirror` command: the installed package runs this file built to JavaScript; in this
// repository bin/cluster-mirror.mjs runs it from TypeScript through tsx.
import { ignoreClosedStdout } from "../commands/closed-stdout";
import { clusterMirrorMain } from "../commands/cluster-mirror";

ignoreClosedStdout();

const code = await clusterMirrorMain(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
