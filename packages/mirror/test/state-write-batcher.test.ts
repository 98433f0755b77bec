import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { InvalidMirrorConfigError } from "../src/admin/errors";
import { ClusterMirroring } from "../src/cluster-mirroring";
import type { EncodedStateRecord } from "../src/coordinator/state-records";
import {
  type AppendOutcome,
  DEFAULT_APPEND_LINGER_MS,
  StateWriteBatcher,
} from "../src/coordinator/state-write-batcher";
import type { StateLog } from "../src/ports";
import { EmbeddedSourceConnector, EmbeddedSourceRegistry } from "../src/source/embedded-source-registry";

/** A `__mirror_state` log that records each append's keys and acknowledges it at once. */
function recordingLog(): StateLog & { appends: string[][] } {
  const appends: string[][] = [];
  return {
    partition: 0,
    appends,
    append: async (records) => {
      appends.push(records.map((r) => r.key.toString()));
    },
    readAll: () => [],
  };
}

const record = (key: string): EncodedStateRecord => ({ key: Buffer.from(key), value: Buffer.from("v") });

function batcher(lingerMs: number) {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const log = recordingLog();
  const outcomes: string[] = [];
  const writer = new StateWriteBatcher(log, () => 0, scheduler, lingerMs);
  const write = (key: string) =>
    writer.write(record(key), (o: AppendOutcome) => outcomes.push(`${key}:${o.kind}`));
  return { clock, scheduler, log, outcomes, write };
}

describe("StateWriteBatcher: mirror.coordinator.append.linger.ms", () => {
  it("is adaptive by default, as Kafka's coordinators are (-1)", () => {
    expect(DEFAULT_APPEND_LINGER_MS).toBe(-1);
  });

  it("adaptive: what the current step writes goes out in one append, without waiting for the clock", async () => {
    const b = batcher(-1);
    b.write("a");
    b.write("b");
    expect(b.log.appends).toEqual([]);
    b.scheduler.runDue();
    expect(b.clock.now()).toBe(0);
    expect(b.log.appends).toEqual([["a", "b"]]);
    await Promise.resolve();
    expect(b.outcomes).toEqual(["a:committed", "b:committed"]);
  });

  it("adaptive: tasks queued before the first write still join its append (the flush runs after them)", () => {
    const b = batcher(-1);
    b.scheduler.schedule(() => b.write("queued-earlier"));
    b.write("first");
    b.scheduler.runDue();
    expect(b.log.appends).toEqual([["first", "queued-earlier"]]);
  });

  it("0: every record is appended at once, on its own", () => {
    const b = batcher(0);
    b.write("a");
    b.write("b");
    expect(b.log.appends).toEqual([["a"], ["b"]]);
    expect(b.scheduler.pending).toBe(0);
  });

  it("a positive linger waits that many milliseconds for more records", () => {
    const b = batcher(10);
    b.write("a");
    b.scheduler.run(9);
    b.write("b");
    expect(b.log.appends).toEqual([]);
    b.scheduler.run(1);
    expect(b.log.appends).toEqual([["a", "b"]]);
  });

  it.each([-2, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    "refuses %s with INVALID_CONFIG naming the setting and its valid values",
    (lingerMs) => {
      const b = () => batcher(lingerMs);
      expect(b).toThrow(InvalidMirrorConfigError);
      expect(b).toThrow(/mirror\.coordinator\.append\.linger\.ms must be -1 \(adaptive.*got/);
      const clock = new ManualClock(0);
      const cluster = KafkaCluster.start({
        brokers: 1,
        clock,
        scheduler: new ManualScheduler(clock),
        random: new SeededRandom(1),
      });
      try {
        const start = () =>
          ClusterMirroring.start({
            cluster,
            sources: new EmbeddedSourceConnector(new EmbeddedSourceRegistry()),
            random: new SeededRandom(1),
            lingerMs,
          });
        expect(start).toThrow(InvalidMirrorConfigError);
        // Refused before anything was created.
        expect(cluster.controller.image.topic("__mirror_state")).toBeUndefined();
      } finally {
        cluster.close();
      }
    },
  );
});
