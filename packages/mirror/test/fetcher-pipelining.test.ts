import { describe, expect, it } from "vitest";
import type { SourceCluster, SourceFetchRequest } from "../src/ports";
import {
  batchBytes,
  bind,
  drive,
  leaderLog,
  type MirrorEnv,
  mirrorEnv,
  produce,
  TOPIC,
  valuesBatch,
} from "./data-helpers";

type SourceFetchResponse = Awaited<ReturnType<SourceCluster["fetch"]>>;

/** One fetch the source got: what was asked, and the destination's log end of each partition then. */
interface FetchCall {
  readonly request: SourceFetchRequest;
  readonly at: number;
  /** Destination log end offset per partition when the fetch was sent. */
  readonly destinationEnds: Map<number, bigint>;
  /** The partitions and their fetch offsets, e.g. `[[0, 3n], [1, 3n]]`. */
  readonly offsets: [number, bigint][];
  /** Runs the fetch on the source and answers it (once; immediately unless the source is gated). */
  release(): void;
}

/**
 * Wraps the source of a mirror environment: records every fetch, and while `gated` holds each one (the
 * source has not even read it) until the test releases it, as a slow network source would.
 */
function recordingSource() {
  const calls: FetchCall[] = [];
  const state = { gated: false, env: undefined as MirrorEnv | undefined };
  const wrap = (s: SourceCluster): SourceCluster => ({
    ...bind(s),
    fetch: (request) =>
      new Promise<SourceFetchResponse>((resolve, reject) => {
        const env = state.env!;
        let released = false;
        const call: FetchCall = {
          request,
          at: env.clock.now(),
          destinationEnds: new Map(
            request.partitions.map((p) => [
              p.partition,
              leaderLog(env.destination, p.partition).logEndOffset,
            ]),
          ),
          offsets: request.partitions.map((p) => [p.partition, p.fetchOffset]),
          release: () => {
            if (released) return;
            released = true;
            s.fetch(request).then(resolve, reject);
          },
        };
        calls.push(call);
        if (!state.gated) call.release();
      }),
  });
  /** `wrap`, with each answer passed through `rewrite` (after it was recorded). */
  const wrapRewriting =
    (rewrite: (response: SourceFetchResponse) => SourceFetchResponse) =>
    (s: SourceCluster): SourceCluster => {
      const recorded = wrap(s);
      return { ...recorded, fetch: async (request) => rewrite(await recorded.fetch(request)) };
    };
  return { calls, state, wrap, wrapRewriting };
}

/** Lets promise continuations run (a released answer reaches the fetcher). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe("mirror fetcher pipelining", () => {
  it("sends the next fetch as soon as a response is decoded, from where the log will stand, and uses its answer", async () => {
    const source = recordingSource();
    // About three batches per fetch: the partition takes several rounds.
    const env = mirrorEnv({ wrapSource: source.wrap, config: { partitionMaxBytes: 300 } });
    source.state.env = env;
    for (let i = 0; i < 20; i++) await produce(env, valuesBatch([`v${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    const offsets = source.calls.map((c) => c.offsets[0]![1]);
    const end = leaderLog(env.source).logEndOffset;
    const toEnd = offsets.slice(0, offsets.indexOf(end) + 1);
    expect(toEnd.length).toBeGreaterThan(3);
    // Every fetch sent ahead was used: no offset was asked twice on the way to the end.
    for (let i = 1; i < toEnd.length; i++) expect(toEnd[i]!).toBeGreaterThan(toEnd[i - 1]!);
    // Each fetch after the first went out before the previous answer was appended.
    for (const call of source.calls.slice(1, toEnd.length))
      expect(call.offsets[0]![1]).toBeGreaterThan(call.destinationEnds.get(0)!);
    // And never below what the destination already holds.
    for (const call of source.calls)
      expect(call.offsets[0]![1]).toBeGreaterThanOrEqual(call.destinationEnds.get(0)!);
    expect(env.events.failures).toEqual([]);
  });

  it("discards the fetch sent ahead when the append stops short (a corrupt batch), and fetches again from the log end", async () => {
    let damaged = false;
    const source = recordingSource();
    const env = mirrorEnv({
      wrapSource: source.wrapRewriting((response) => {
        if (damaged) return response;
        return {
          ...response,
          partitions: response.partitions.map((p) => {
            if (p.recordSlices.length < 5) return p;
            damaged = true;
            // The third batch's CRC no longer matches (one slice per stored batch).
            const slices = p.recordSlices.map((b) => Buffer.from(b));
            slices[2]![slices[2]!.length - 1]! ^= 0x55;
            return { ...p, recordSlices: slices };
          }),
        };
      }),
    });
    source.state.env = env;
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`c${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(damaged).toBe(true);
    // 0: the damaged answer; 5: sent ahead from it, discarded (only 2 batches were appended); 2: again.
    expect(source.calls.slice(0, 3).map((c) => c.offsets[0]![1])).toEqual([0n, 5n, 2n]);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.events.failures).toEqual([]);
  });

  it("appends nothing from the fetch sent ahead for a partition removed while it was in flight", async () => {
    const source = recordingSource();
    const env = mirrorEnv({ sourceAssignment: [[0], [0]], wrapSource: source.wrap });
    source.state.env = env;
    for (let i = 0; i < 3; i++) {
      await produce(env, valuesBatch([`a${i}`]), 0);
      await produce(env, valuesBatch([`b${i}`]), 1);
    }
    source.state.gated = true;
    env.manager.addPartition(env.key(0));
    env.manager.addPartition(env.key(1));
    await drive(env, 5);
    expect(source.calls).toHaveLength(1);
    source.calls[0]!.release();
    await settle();
    // The next fetch left before the first answer was appended, for both partitions.
    expect(source.calls).toHaveLength(2);
    const ahead = source.calls[1]!;
    expect(ahead.offsets.sort()).toEqual([
      [0, 3n],
      [1, 3n],
    ]);
    expect(ahead.destinationEnds.get(1)).toBe(0n);
    let removed = false;
    const removal = env.manager.removePartition(env.key(1)).then(() => {
      removed = true;
    });
    for (let i = 3; i < 5; i++) {
      await produce(env, valuesBatch([`a${i}`]), 0);
      await produce(env, valuesBatch([`b${i}`]), 1);
    }
    source.state.gated = false;
    ahead.release();
    await drive(env, 2000);
    await removal;
    expect(removed).toBe(true);
    expect(leaderLog(env.destination, 1).logEndOffset).toBe(3n);
    expect(batchBytes(env.destination, 0)).toEqual(batchBytes(env.source, 0));
    expect(source.calls.slice(2).every((c) => c.offsets.every(([p]) => p === 0))).toBe(true);
    expect(env.events.failures).toEqual([]);
  });

  it("follows a source leader change that happens while the fetch sent ahead is in flight", async () => {
    const source = recordingSource();
    const env = mirrorEnv({
      sourceBrokers: 2,
      sourceAssignment: [[0, 1]],
      wrapSource: source.wrap,
      config: { partitionMaxBytes: 250 },
    });
    source.state.env = env;
    for (let i = 0; i < 6; i++) await produce(env, valuesBatch([`l${i}`]));
    await drive(env, 100); // the follower catches up: the election below is clean
    source.state.gated = true;
    env.manager.addPartition(env.key());
    await drive(env, 5);
    source.calls[0]!.release();
    await settle();
    const ahead = source.calls[1]!;
    expect(ahead.request.brokerId).toBe(0);
    const [[, aheadOffset]] = ahead.offsets as [[number, bigint]];
    expect(aheadOffset).toBeGreaterThan(0n);
    expect(aheadOffset).toBeLessThan(6n);
    expect(ahead.destinationEnds.get(0)).toBe(0n);
    const epochBefore = ahead.request.partitions[0]!.currentLeaderEpoch;
    env.source.crashBroker(0); // broker 1 leads now, at a higher epoch
    source.state.gated = false;
    ahead.release();
    await drive(env, 10_000);
    expect(env.source.controller.image.partition(TOPIC, 0)?.leader).toBe(1);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    const last = source.calls[source.calls.length - 1]!;
    expect(last.request.brokerId).toBe(1);
    expect(last.request.partitions[0]!.currentLeaderEpoch).toBeGreaterThan(epochBefore);
    expect(env.events.failures).toEqual([]);
  });

  it("sends nothing ahead of a response that carries a throttle time: the next fetch waits it out", async () => {
    const source = recordingSource();
    let throttled = 0;
    const env = mirrorEnv({
      config: { partitionMaxBytes: 300 },
      wrapSource: source.wrapRewriting((response) =>
        throttled++ === 0 ? { ...response, throttleTimeMs: 250 } : response,
      ),
    });
    source.state.env = env;
    for (let i = 0; i < 10; i++) await produce(env, valuesBatch([`t${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    const [first, second, third] = source.calls;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(250);
    // Unthrottled answers pipeline again: the third fetch left before the second answer was appended.
    expect(third!.at).toBe(second!.at);
    expect(third!.offsets[0]![1]).toBeGreaterThan(third!.destinationEnds.get(0)!);
  });
});
