import {
  clientMirrorRun,
  copyFloorRun,
  leanRun,
  mirrorRun,
  type Run,
  type Shape,
  sourceEnv,
} from "../embedded-mirror";
import { type BenchResult, type BenchSuite, result } from "../harness";
import { cpuNote, figures, interleaved } from "../interleave";

/** Counted rounds per shape (after one warm-up round); each figure is the median of these. */
const ROUNDS = 5;

interface Case {
  name: string;
  shape: Shape;
  /** MB per CPU-second the copying mirror should reach; undefined: informational. */
  perCoreTarget?: number;
  /** Ratio to the leanest consume-then-produce mirror the copying mirror should reach. */
  ratioTarget?: number;
  /** Also run the MirrorMaker on the kafkajs-shaped clients (slow: a quarter of the data). */
  clients: boolean;
}

const CASES: Case[] = [
  {
    name: "16KiB-batches.1KiB-records.rf1",
    shape: { batchBytes: 16 * 1024, records: 16, batches: 8192, rf: 1 },
    perCoreTarget: 3000,
    ratioTarget: 20,
    clients: true,
  },
  {
    name: "16KiB-batches.100B-records.rf1",
    shape: { batchBytes: 16 * 1024, records: 140, batches: 8192, rf: 1 },
    perCoreTarget: 3000,
    ratioTarget: 20,
    clients: true,
  },
  {
    name: "1KiB-batches.1KiB-records.rf1",
    shape: { batchBytes: 1024, records: 1, batches: 32768, rf: 1 },
    perCoreTarget: 1000,
    clients: false,
  },
  {
    name: "16KiB-batches.1KiB-records.rf3",
    shape: { batchBytes: 16 * 1024, records: 16, batches: 8192, rf: 3 },
    clients: false,
  },
];

function verdict(value: number, target: number | undefined, what: string): string {
  if (target === undefined) return "";
  return `; target >= ${target}${what}: ${value >= target ? "MET" : "MISSED"}`;
}

/**
 * The embedded mirror (fetcher manager, destination log, validation) on 16 KiB and 1 KiB batches. The
 * headline copies the fetched bytes once per fetch, as a socket read from a network source would
 * (`copyOnFetch`: the append copies into the destination's memory and checks each CRC-32C on the copy);
 * the zero-copy figure (the destination keeps views of the source's memory, in process only) is printed
 * as a labelled extra. Baselines, measured in the same run and interleaved with the mirror round by round:
 * the leanest consume-then-produce mirror (broker fetch, decode every record, re-encode, produce acks=-1,
 * no client) and a MirrorMaker on the kafkajs-shaped clients. Figures are medians of ROUNDS runs, by the
 * wall clock and per CPU-second (this process's user + system time: the rate one core would sustain,
 * which a machine shared with other work distorts less than the wall clock).
 */
export const suite: BenchSuite = {
  name: "mirror-throughput",
  async run(): Promise<BenchResult[]> {
    const results: BenchResult[] = [];
    for (const c of CASES) {
      const env = await sourceEnv(c.shape);
      const sides: Record<string, (round: number) => Promise<Run>> = {
        copy: (round: number) => mirrorRun(env, 10 * round, true),
        lean: (round: number) => leanRun(env, 10 * round + 1, 0.25),
        zeroCopy: (round: number) => mirrorRun(env, 10 * round + 2, false),
        floor: () => copyFloorRun(env),
        ...(c.clients ? { clients: (round: number) => clientMirrorRun(env, 10 * round + 3, 0.125) } : {}),
      };
      const runs = await interleaved(ROUNDS, sides);
      const copy = figures(runs.copy!);
      const lean = figures(runs.lean!);
      const zero = figures(runs.zeroCopy!);
      const floor = figures(runs.floor!);
      const data = `${(env.bytes / 1e6).toFixed(0)} MB, median of ${ROUNDS} interleaved runs`;
      const ratio = copy.mbps / lean.mbps;
      results.push(
        result(
          `mirror.copy.${c.name}`,
          copy.mbps,
          "MB/s",
          lean.mbps,
          `one copy per fetch vs leanest consume-then-produce (broker fetch, decode, re-encode, produce acks=-1); ${data}${verdict(ratio, c.ratioTarget, "x")}`,
        ),
        result(
          `mirror.copy.${c.name}.per-core`,
          copy.mbpsPerCore,
          "MB/s/core",
          lean.mbpsPerCore,
          `MB per CPU-second; mirror ${cpuNote(copy)}; baseline ${cpuNote(lean)}${verdict(copy.mbpsPerCore, c.perCoreTarget, " MB/s per core")}`,
        ),
        result(
          `mirror.copy.${c.name}.vs-copy-floor`,
          copy.mbpsPerCore,
          "MB/s/core",
          floor.mbpsPerCore,
          `MB per CPU-second, mirror vs the floor of one copy per fetch on this machine: the same 2 MiB fetches copied into fresh kept buffers, each batch's CRC-32C computed on the copy right after (one call per batch), nothing else (${cpuNote(floor)}); a ratio near 1 means the copy and CRC are what is left`,
        ),
        result(
          `mirror.zero-copy.${c.name}.extra`,
          zero.mbps,
          "MB/s",
          lean.mbps,
          `EXTRA, not the headline: the destination keeps views of the source's memory (in process only); ${cpuNote(zero)}`,
        ),
      );
      const clientRuns = runs.clients;
      if (clientRuns) {
        const clients = figures(clientRuns);
        results.push(
          result(
            `mirror.copy.${c.name}.vs-clients`,
            copy.mbps,
            "MB/s",
            clients.mbps,
            `one copy per fetch vs MirrorMaker on the kafkajs-shaped clients (group consumer, idempotent producer acks=all); baseline ${cpuNote(clients)}`,
          ),
        );
      }
    }
    return results;
  },
};
