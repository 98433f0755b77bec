import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import {
  ClusterMirroring,
  DEFAULT_MIRROR_STATE_PARTITIONS,
  EmbeddedSourceConnector,
  EmbeddedSourceRegistry,
} from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

const STATE = "__mirror_state";

describe("__mirror_state partition count (issue 11 item 10)", () => {
  it("is created with the one default, DEFAULT_MIRROR_STATE_PARTITIONS", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const cluster = KafkaCluster.start({
      brokers: 1,
      clock,
      scheduler: new ManualScheduler(clock),
      random: new SeededRandom(1),
    });
    const sources = new EmbeddedSourceConnector(new EmbeddedSourceRegistry());
    const mirroring = ClusterMirroring.start({ cluster, sources, random: new SeededRandom(2) });
    expect(cluster.controller.image.topic(STATE)?.partitions.length).toBe(DEFAULT_MIRROR_STATE_PARTITIONS);
    expect(DEFAULT_MIRROR_STATE_PARTITIONS).toBe(50);
    mirroring.close();
    cluster.close();
  });

  it("is fixed once created: a restart asking for another count keeps the topic's, warns, and fails over", async () => {
    const t = topology(["a", "b"], { statePartitions: 3 });
    const a = t.node("a");
    const b = t.node("b");
    await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 6 }] }));
    await t.advance(200); // the coordinators load __mirror_state
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));

    // The engine restarts with another mirror.topic.num.partitions (the cluster keeps running).
    b.mirroring.close();
    const warnings: string[] = [];
    const restarted = ClusterMirroring.start({
      cluster: b.cluster,
      sources: new EmbeddedSourceConnector(t.registry),
      random: new SeededRandom(77),
      numStatePartitions: 7,
      warn: (m) => warnings.push(m),
    });
    await t.advance(200);

    // Every partition's coordinator is found: the failover reaches STOPPED.
    await t.run(restarted.admin.removeTopics("dr", "orders"));
    await t.run(restarted.whenState("dr", "STOPPED", { timeoutMs: 120_000 }));
    const states = (await t.run(restarted.admin.describe("dr"))).map((r) => r.state);
    expect(states).toEqual(Array(6).fill("STOPPED"));
    expect(b.cluster.controller.image.topic(STATE)?.partitions.length).toBe(3);
    expect(warnings.some((w) => w.includes("3 partitions") && w.includes("=7 is ignored"))).toBe(true);
    restarted.close();
  });
});
