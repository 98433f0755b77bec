import { describe, expect, it } from "vitest";
import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "../src/index";

const start = (brokers: unknown) =>
  KafkaCluster.start({
    brokers: brokers as number,
    clock: new SystemClock(),
    scheduler: new EventLoopScheduler({ keepAlive: false }),
    random: new SeededRandom(1),
  });

describe("KafkaCluster.start's broker count", () => {
  it.each([
    [0, "0"],
    [-1, "-1"],
    [Number.NaN, "NaN"],
    [1.5, "1.5"],
    ["3", '"3"'],
  ])("refuses %o at once with a typed error, before any broker starts", (brokers, shown) => {
    expect(() => start(brokers)).toThrow(
      expect.objectContaining({
        errorName: "INVALID_REQUEST",
        message: `brokers must be an integer >= 1, got ${shown}; a cluster needs at least one broker`,
      }),
    );
  });

  it("starts one broker per id for a valid count", () => {
    const cluster = start(2);
    try {
      expect(cluster.runningBrokers()).toEqual([0, 1]);
    } finally {
      cluster.close();
    }
  });
});

describe("KafkaCluster.start's option names", () => {
  const startWith = (extra: object) =>
    KafkaCluster.start({
      clock: new SystemClock(),
      scheduler: new EventLoopScheduler({ keepAlive: false }),
      random: new SeededRandom(1),
      ...extra,
    } as never);

  it("refuses an option it does not know, with a did-you-mean, before any broker starts", () => {
    // Both were taken without a word: the cluster started the default three brokers, or kept
    // min.insync.replicas at 1.
    expect(() => startWith({ brokr: 1 })).toThrow(
      expect.objectContaining({
        errorName: "INVALID_REQUEST",
        message: expect.stringMatching(
          /^KafkaCluster.start has no option 'brokr'\. Known: brokers, dataDir,/,
        ),
      }),
    );
    expect(() => startWith({ brokers: 1, minInsyncReplica: 2 })).toThrow(
      /^KafkaCluster.start has no option 'minInsyncReplica'; did you mean 'minInsyncReplicas'\? Known: /,
    );
    const cluster = startWith({ brokers: 1, minInsyncReplicas: 1 });
    try {
      expect(cluster.runningBrokers()).toEqual([0]);
    } finally {
      cluster.close();
    }
  });
});
