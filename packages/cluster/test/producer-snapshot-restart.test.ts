import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ClusterError } from "../src/index";
import { batch, testCluster } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("a broker restarted after DeleteRecords removed every batch of a producer", () => {
  it("still detects that producer's retried batch and its gaps (Kafka loads its producer snapshot)", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-mirror-"));
    dirs.push(dataDir);
    const { cluster, settle } = testCluster({ dataDir, fsync: false, brokers: 1 });
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0]],
      configs: { "segment.bytes": "100" },
    });
    settle();
    const sent = (baseSequence: number) =>
      cluster.broker(0)!.produce({
        topic: "t",
        partition: 0,
        batch: batch([`v${baseSequence}`], { producerId: 5n, producerEpoch: 0, baseSequence }),
        acks: 1,
      });
    for (let seq = 0; seq < 3; seq++) await sent(seq);
    await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["plain"]), acks: 1 });
    expect(cluster.broker(0)!.deleteRecords("t", 0, 3n)).toBe(3n);
    expect(cluster.broker(0)!.replica("t", 0)!.log.segments()[0]!.baseOffset).toBe(3n);
    // A crash: nothing is written at close, the deletion's own snapshot has to carry the producer.
    cluster.crashBroker(0);
    cluster.startBroker(0);
    settle(1000);
    expect(
      cluster
        .broker(0)!
        .replica("t", 0)!
        .log.producerStateSnapshot()
        .map((p) => p.producerId),
    ).toEqual([5n]);
    expect(await sent(2)).toMatchObject({ duplicate: true, baseOffset: 2n });
    const gap = await sent(5).then(
      () => undefined,
      (error: ClusterError) => error,
    );
    expect(gap?.errorName).toBe("OUT_OF_ORDER_SEQUENCE_NUMBER");
    expect(await sent(3)).toMatchObject({ duplicate: false, baseOffset: 4n });
    cluster.close();
  });
});
