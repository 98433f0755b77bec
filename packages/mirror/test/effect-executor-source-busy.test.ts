import { ClusterError, ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { SOURCE_BUSY_POLL_MS, SOURCE_BUSY_WAIT_MS } from "../src/coordinator/effect-executor";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

/** A source whose LME lookups answer MIRROR_FAILOVER_IN_PROGRESS (it fails the partition over itself). */
function busySource() {
  const asked: number[] = [];
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const source = {
    lastMirrorEpoch: async () => {
      asked.push(clock.now());
      throw new KafkaError("MIRROR_FAILOVER_IN_PROGRESS", -1, true, "orders-0 is failing over (STOPPING)");
    },
  };
  const executor = executorOver({ clusterId: "destination" }, { source, clock, scheduler });
  const p = recordingPartition("orders", 0);
  executor.run(p.runtime, { type: "lookupLastMirrorEpoch", params: { stateEpoch: 3 } });
  return { asked, scheduler, executor, p };
}

/** Runs the scheduler for `ms` of virtual time, letting the lookup's continuations run between its timers. */
async function runFor(scheduler: ManualScheduler, ms: number): Promise<void> {
  await flush();
  for (let t = 0; t < ms; t += SOURCE_BUSY_POLL_MS) {
    scheduler.run(SOURCE_BUSY_POLL_MS);
    await flush();
  }
}

describe("effect executor: PREPARING's LME lookup against a source that says 'retry shortly'", () => {
  it("asks again every 500 ms on the injected clock and fails (retryable) with the source's words after 30 s", async () => {
    const { asked, scheduler, p } = busySource();
    await runFor(scheduler, SOURCE_BUSY_WAIT_MS + 2 * SOURCE_BUSY_POLL_MS);
    expect(asked[0]).toBe(0);
    expect(asked.at(-1)).toBe(SOURCE_BUSY_WAIT_MS);
    expect(asked).toHaveLength(SOURCE_BUSY_WAIT_MS / SOURCE_BUSY_POLL_MS + 1);
    expect(p.events).toEqual([
      expect.objectContaining({
        type: "EFFECT_FAILED",
        stateEpoch: 3,
        retryable: true,
        message: expect.stringMatching(/failing over \(STOPPING\)/),
      }),
    ]);
    expect(scheduler.pending).toBe(0);
  });

  it("waits out COORDINATOR_NOT_AVAILABLE (the source's mirror coordinator moving) and goes on once the source answers", async () => {
    const asked: number[] = [];
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const source = {
      lastMirrorEpoch: async () => {
        asked.push(clock.now());
        if (clock.now() < 2_000) {
          throw new ClusterError(
            "COORDINATOR_NOT_AVAILABLE",
            "the mirror coordinator of __mirror_state-1 is not available (no running leader); retry after its election",
          );
        }
        return 7;
      },
    };
    const executor = executorOver({ clusterId: "destination" }, { source, clock, scheduler });
    const p = recordingPartition("orders", 0);
    executor.run(p.runtime, { type: "lookupLastMirrorEpoch", params: { stateEpoch: 3 } });
    await runFor(scheduler, 3_000);
    // Before: EFFECT_FAILED at once, on the first answer.
    expect(asked).toEqual([0, 500, 1_000, 1_500, 2_000]);
    expect(p.events).toEqual([{ type: "LME_FOUND", stateEpoch: 3, lme: 7 }]);
    expect(scheduler.pending).toBe(0);
  });

  it("a shard that unloads during the wait cancels the poll: no timer is left, the source is not asked again", async () => {
    const { asked, scheduler, executor, p } = busySource();
    await runFor(scheduler, 2 * SOURCE_BUSY_POLL_MS);
    const before = asked.length;
    expect(before).toBeGreaterThan(0);
    expect(scheduler.pending).toBe(1);
    executor.cancelAll();
    expect(scheduler.pending).toBe(0);
    await runFor(scheduler, SOURCE_BUSY_WAIT_MS);
    expect(asked).toHaveLength(before);
    expect(p.events).toEqual([]);
  });

  it("a partition removed during the wait cancels its poll", async () => {
    const { asked, scheduler, executor, p } = busySource();
    await runFor(scheduler, SOURCE_BUSY_POLL_MS);
    const before = asked.length;
    expect(scheduler.pending).toBe(1);
    p.runtime.close();
    executor.cancelTimers(p.runtime);
    expect(scheduler.pending).toBe(0);
    await runFor(scheduler, SOURCE_BUSY_WAIT_MS);
    expect(asked).toHaveLength(before);
    expect(p.events).toEqual([]);
  });

  it("a partition that left PREPARING during the wait is neither asked for again nor told anything", async () => {
    const { asked, scheduler, p } = busySource();
    await runFor(scheduler, SOURCE_BUSY_POLL_MS);
    const before = asked.length;
    p.runtime.close(); // isStill(3) no longer holds
    await runFor(scheduler, SOURCE_BUSY_WAIT_MS);
    expect(asked).toHaveLength(before);
    expect(p.events).toEqual([]);
    expect(scheduler.pending).toBe(0);
  });
});
