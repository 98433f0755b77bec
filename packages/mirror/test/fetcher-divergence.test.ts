import { ClusterError } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import type { SourceCluster, SourceFetchPartitionResult, SourceFetchRequest } from "../src/ports";
import { batchBytes, bind, drive, leaderLog, mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

/** Values of the destination leader's records, in offset order. */
function epochsOf(env: ReturnType<typeof mirrorEnv>): { offset: bigint; epoch: number }[] {
  return [...leaderLog(env.destination).batches()].map((b) => ({
    offset: b.baseOffset,
    epoch: b.partitionLeaderEpoch,
  }));
}

/** How `scriptedSource` rewrites the partition's answers while `times` > 0 (each rewrite counts one). */
interface Script {
  times: number;
  rewrite?: (
    request: SourceFetchRequest,
    real: SourceFetchPartitionResult,
  ) => Partial<SourceFetchPartitionResult>;
  /** Overrides ListOffsets(-1) while set. */
  listLatest?: bigint;
  /** Overrides ListOffsets(-2) while set. */
  listEarliest?: bigint;
  /** While set, ListOffsets answers only once it resolves (an answer still on its way). */
  gate?: Promise<void>;
  /** Every ListOffsets timestamp asked (-2 earliest, -1 latest), in order. */
  listed?: bigint[];
  /** The fetch offset (the destination's log end) of every rewritten fetch, in order. */
  fetchOffsets: bigint[];
}

/** The embedded source with the partition's next `script.times` fetch answers rewritten. */
function scriptedSource(inner: SourceCluster, script: Script): SourceCluster {
  const s = bind(inner);
  return {
    ...s,
    fetch: async (request) => {
      const real = await s.fetch(request);
      const rewrite = script.rewrite;
      if (rewrite === undefined || script.times <= 0) return real;
      script.times--;
      for (const p of request.partitions) script.fetchOffsets.push(p.fetchOffset);
      return { ...real, partitions: real.partitions.map((p) => ({ ...p, ...rewrite(request, p) })) };
    },
    listOffsets: async (t, p, ts) => {
      script.listed?.push(ts);
      // The answer is what the source knew when asked; a gate delays only its arrival.
      const answer =
        ts === -1n && script.listLatest !== undefined
          ? script.listLatest
          : ts === -2n && script.listEarliest !== undefined
            ? script.listEarliest
            : await s.listOffsets(t, p, ts);
      if (script.gate) await script.gate;
      return answer;
    },
  };
}

/** An idle script (every ListOffsets timestamp it is asked recorded) and an environment on its source. */
function scriptedEnv(): { script: Script; env: ReturnType<typeof mirrorEnv> } {
  const script: Script = { times: 0, fetchOffsets: [], listed: [] };
  return { script, env: mirrorEnv({ wrapSource: (s) => scriptedSource(s, script) }) };
}

/** Produces `count` one-record batches (`r0`, `r1`, ...) on the source, adds the partition and mirrors them. */
async function mirrorRecords(env: ReturnType<typeof mirrorEnv>, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await produce(env, valuesBatch([`r${i}`]));
  env.manager.addPartition(env.key());
  await drive(env, 1000);
}

describe("mirror fetcher divergence: nothing the source still has is removed", () => {
  it("a source leader elected without the destination's latest epoch: committed records stay (KIP-320)", async () => {
    const script: Script = { times: 0, fetchOffsets: [] };
    const env = mirrorEnv({
      sourceBrokers: 2,
      sourceAssignment: [[0, 1]],
      sourceConfigs: { "unclean.leader.election.enable": "true" },
      wrapSource: (s) => scriptedSource(s, script),
    });
    env.destination.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 10 }]);
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`c${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    // Broker 1 falls out of sync; broker 0 goes on at epoch 1 alone, and the destination mirrors that too.
    env.source.controller.alterPartition(TOPIC, 0, { leader: 0, leaderEpoch: 0, isr: [0] });
    env.source.setReachable(1, false);
    env.source.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 1 }]);
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`e1-${i}`]));
    await drive(env, 1000);
    expect(epochsOf(env).map((b) => b.epoch)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(leaderLog(env.destination).highWatermark).toBe(6n);
    // Broker 1 (epochs 0 only, offsets 0-2) is elected uncleanly at epoch 2 and has no batch of it yet.
    // The source's answers keep their diverging epoch but bring no records for a while, so the
    // truncation is seen alone, before anything could be fetched back.
    script.rewrite = () => ({ recordSlices: [] });
    script.times = 20;
    env.source.setReachable(1, true);
    env.source.crashBroker(0);
    await drive(env, 2000);
    expect(env.source.controller.image.partition(TOPIC, 0)?.leader).toBe(1);
    // It answers epoch 1 with (0, 3): the destination drops only what the source lost, keeps 0-2.
    expect(leaderLog(env.destination).logEndOffset).toBe(3n);
    expect(leaderLog(env.destination).logStartOffset).toBe(0n);
    script.times = 0;
    for (let i = 0; i < 2; i++) await produce(env, valuesBatch([`after${i}`]));
    await drive(env, 2000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.events.failures).toEqual([]);
  });

  it("an UNDEFINED diverging answer (-1, -1) truncates to the high watermark, never to the log start", async () => {
    const { script, env } = scriptedEnv();
    await mirrorRecords(env, 4);
    expect(leaderLog(env.destination).highWatermark).toBe(4n);
    script.rewrite = () => ({ divergingEpoch: { epoch: -1, endOffset: -1n }, recordSlices: [] });
    script.times = 20;
    await drive(env, 3000);
    expect(script.times).toBeLessThan(19); // the answer came, more than once
    // The destination never fetched from below its committed end: nothing was truncated and re-fetched.
    expect(script.fetchOffsets.every((o) => o === 4n)).toBe(true);
    expect(leaderLog(env.destination).logEndOffset).toBe(4n);
    expect(leaderLog(env.destination).logStartOffset).toBe(0n);
    // Records are still withheld (nothing was fetched back), and the repeated answer did not make the
    // fetcher spin: it waits between fetches that change nothing.
    expect(script.times).toBeGreaterThan(0);
    script.times = 0;
    for (let i = 0; i < 2; i++) await produce(env, valuesBatch([`s${i}`]));
    await drive(env, 2000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
  });

  it("a diverging epoch the destination lacks truncates to the end of its own largest epoch below it", async () => {
    const { script, env } = scriptedEnv();
    env.destination.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 10 }]);
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`e0-${i}`]));
    env.source.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 2 }]);
    for (let i = 0; i < 2; i++) await produce(env, valuesBatch([`e2-${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(epochsOf(env).map((b) => b.epoch)).toEqual([0, 0, 0, 2, 2]);
    // The source says epoch 1 ends at 5; locally epoch 0 (the largest <= 1) ends at 3: Kafka truncates to 3
    // and asks again with epoch 0, rather than keeping epoch-2 batches at 3-4 the source may not have.
    // Then records are withheld for a while, so the truncation is seen before anything is fetched back.
    let answers = 0;
    script.rewrite = () =>
      answers++ === 0
        ? { divergingEpoch: { epoch: 1, endOffset: 5n }, recordSlices: [] }
        : { recordSlices: [] };
    script.times = 20;
    await drive(env, 2000);
    expect(answers).toBeGreaterThan(1);
    expect(leaderLog(env.destination).logEndOffset).toBe(3n);
    script.times = 0;
    await drive(env, 2000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
  });

  it("OFFSET_OUT_OF_RANGE past a source's end never truncates below the destination high watermark", async () => {
    const { script, env } = scriptedEnv();
    await mirrorRecords(env, 5);
    expect(leaderLog(env.destination).highWatermark).toBe(5n);
    // A source leader that came back shorter (end 2) for a while: the destination keeps its committed 0-4.
    script.rewrite = (request) => ({
      error: new ClusterError(
        "OFFSET_OUT_OF_RANGE",
        `fetch offset ${request.partitions[0]?.fetchOffset} is past the log end 2`,
      ),
      recordSlices: [],
      logStartOffset: 0n,
    });
    script.times = 20;
    script.listLatest = 2n;
    await drive(env, 3000);
    expect(script.times).toBeLessThan(19);
    expect(script.fetchOffsets.every((o) => o === 5n)).toBe(true);
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);
    expect(script.times).toBeGreaterThan(0);
    script.times = 0;
    script.listLatest = undefined;
    await produce(env, valuesBatch(["later"]));
    await drive(env, 2000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.events.failures).toEqual([]);
  });
});

/** Kafka's answer to a fetch outside the log: OFFSET_OUT_OF_RANGE, with no log start (-1) in it. */
function outOfRange(request: SourceFetchRequest): Partial<SourceFetchPartitionResult> {
  return {
    error: new ClusterError(
      "OFFSET_OUT_OF_RANGE",
      `fetch offset ${request.partitions[0]?.fetchOffset} is out of range`,
    ),
    recordSlices: [],
    logStartOffset: -1n,
  };
}

describe("mirror fetcher OFFSET_OUT_OF_RANGE as an Apache Kafka broker answers it (no log start in the answer)", () => {
  for (const carried of [false, true]) {
    it(`below the source's log start: starts over there (log start ${carried ? "in the answer, no ListOffsets" : "from ListOffsets EARLIEST"})`, async () => {
      const { script, env } = scriptedEnv();
      for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`r${i}`]));
      env.source.leaderFor(TOPIC, 0).deleteRecords(TOPIC, 0, 3n);
      // Kafka's error answers carry no log start; the embedded source's do (3 here).
      script.rewrite = (request, real) =>
        real.error?.errorName === "OFFSET_OUT_OF_RANGE" && !carried ? outOfRange(request) : {};
      script.times = 20;
      env.manager.addPartition(env.key());
      await drive(env, 1000);
      expect(script.fetchOffsets[0]).toBe(0n);
      expect(script.listed).toEqual(carried ? [] : [-2n]);
      expect(leaderLog(env.destination).logStartOffset).toBe(3n);
      expect(batchBytes(env.destination)).toEqual(batchBytes(env.source, 0, 3n));
      expect(env.events.failures).toEqual([]);
    });
  }

  it("past the source's end: the uncommitted tail above the high watermark goes down to the source's end, no lower", async () => {
    const script: Script = { times: 0, fetchOffsets: [] };
    const env = mirrorEnv({
      destinationBrokers: 2,
      destinationAssignment: [[0, 1]],
      wrapSource: (s) => scriptedSource(s, script),
    });
    for (let i = 0; i < 4; i++) await produce(env, valuesBatch([`c${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(leaderLog(env.destination).highWatermark).toBe(4n);
    // The destination's follower stops fetching (still in the ISR): what is mirrored now stays uncommitted.
    env.destination.setReachable(1, false);
    for (let i = 0; i < 4; i++) await produce(env, valuesBatch([`u${i}`]));
    await drive(env, 1000);
    expect(leaderLog(env.destination).logEndOffset).toBe(8n);
    expect(leaderLog(env.destination).highWatermark).toBe(4n);
    // The source's leader comes back shorter (end 6) for a while: 6 and 7 are gone from the source, so the
    // destination drops them; 4 and 5, uncommitted here but still on the source, stay.
    script.rewrite = (request) => outOfRange(request);
    script.times = 20;
    script.listLatest = 6n;
    await drive(env, 3000);
    expect(script.fetchOffsets[0]).toBe(8n);
    expect(leaderLog(env.destination).logEndOffset).toBe(6n);
    expect(script.fetchOffsets.at(-1)).toBe(6n);
    // Shorter than the high watermark (end 2): nothing committed goes.
    script.listLatest = 2n;
    await drive(env, 3000);
    expect(leaderLog(env.destination).logEndOffset).toBe(4n);
    expect(leaderLog(env.destination).logStartOffset).toBe(0n);
    script.times = 0;
    script.listLatest = undefined;
    env.destination.setReachable(1, true);
    await drive(env, 3000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.events.failures).toEqual([]);
  });

  it("past the source's end with no records held: the empty log follows the source's end", async () => {
    const { script, env } = scriptedEnv();
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`r${i}`]));
    env.source.leaderFor(TOPIC, 0).deleteRecords(TOPIC, 0, 5n);
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(leaderLog(env.destination).logStartOffset).toBe(5n);
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);
    // A source leader with an older, shorter log (0-2) answers for a while: nothing here to keep, so the
    // destination moves to the source's end and fetches from there.
    script.rewrite = (request) => outOfRange(request);
    script.times = 20;
    script.listEarliest = 0n;
    script.listLatest = 3n;
    await drive(env, 3000);
    expect(script.fetchOffsets[0]).toBe(5n);
    expect(leaderLog(env.destination).logEndOffset).toBe(3n);
    expect(script.fetchOffsets.at(-1)).toBe(3n);
    script.times = 0;
    script.listEarliest = undefined;
    script.listLatest = undefined;
    for (let i = 0; i < 2; i++) await produce(env, valuesBatch([`s${i}`]));
    await drive(env, 3000);
    expect(leaderLog(env.destination).logStartOffset).toBe(5n);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source, 0, 5n));
    expect(env.events.failures).toEqual([]);
  });

  it("an answer that comes back after the partition was removed and added again is dropped", async () => {
    const { script, env } = scriptedEnv();
    await mirrorRecords(env, 5);
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);
    // One fetch answers OFFSET_OUT_OF_RANGE, and the ListOffsets it starts is slow to come back.
    let release = () => {};
    script.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    script.rewrite = (request) => outOfRange(request);
    script.times = 1;
    script.listEarliest = 40n;
    await produce(env, valuesBatch(["next"]));
    await drive(env, 1500);
    expect(script.fetchOffsets).toEqual([5n]);
    expect(script.listed).toEqual([-2n]);
    // Meanwhile the partition is removed and added again; then the stale answer (log start 40) arrives.
    const removed = env.manager.removePartition(env.key());
    await drive(env, 100);
    env.manager.addPartition(env.key());
    script.listEarliest = undefined;
    script.gate = undefined;
    release();
    await removed;
    await drive(env, 2000);
    // Applied, it would have emptied the log and started it at 40; the partition mirrors on instead.
    expect(leaderLog(env.destination).logStartOffset).toBe(0n);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.events.failures).toEqual([]);
  });

  for (const carried of [true, false]) {
    it(`a passing OFFSET_OUT_OF_RANGE at the source's log start keeps every record held (log start ${carried ? "in the answer" : "from ListOffsets"})`, async () => {
      const { script, env } = scriptedEnv();
      await mirrorRecords(env, 5);
      expect(leaderLog(env.destination).logEndOffset).toBe(5n);
      // The source deletes what the destination already holds; one fetch at its new log start (5) gets
      // OFFSET_OUT_OF_RANGE (a leader that was briefly behind). Offset 5 is in range: nothing here goes.
      env.source.leaderFor(TOPIC, 0).deleteRecords(TOPIC, 0, 5n);
      script.rewrite = (request) => ({ ...outOfRange(request), logStartOffset: carried ? 5n : -1n });
      script.times = 1;
      await drive(env, 2000);
      expect(script.fetchOffsets).toEqual([5n]);
      // 5 is not below the log start, so the source is asked where its log starts and ends now.
      expect(script.listed).toEqual([-2n, -1n]);
      for (let i = 0; i < 2; i++) await produce(env, valuesBatch([`s${i}`]));
      await drive(env, 2000);
      // The answers after it carry the source's log start: the copy follows the purge (DeleteRecords), as
      // a Kafka follower follows its leader's log start; what lies above it stays.
      expect(leaderLog(env.destination).logStartOffset).toBe(5n);
      expect(leaderLog(env.destination).logEndOffset).toBe(7n);
      expect(batchBytes(env.destination, 0, 5n)).toEqual(batchBytes(env.source, 0, 5n));
      expect(env.events.failures).toEqual([]);
    });
  }
});
