import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import {
  EmbeddedSourceRegistry,
  type ListGroupOffsetsOptions,
  type SourceCluster,
} from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { EmbeddedOrKafkaSourceConnector, UnsupportedSourceSecurityError } from "../src/index";
import { fakeBroker } from "./fixtures/fake-fetch-broker";

function embeddedCluster(seed: number) {
  const clock = new ManualClock(0);
  return KafkaCluster.start({
    brokers: 1,
    clock,
    scheduler: new ManualScheduler(clock),
    random: new SeededRandom(seed),
  });
}

describe("EmbeddedOrKafkaSourceConnector", () => {
  it("answers from an embedded cluster registered after the mirror's source was opened", async () => {
    const registry = new EmbeddedSourceRegistry();
    const connector = new EmbeddedOrKafkaSourceConnector(registry);
    // A node recovering its clusters may open a mirror's source before its embedded source registers.
    const source = connector.connect("m", { "bootstrap.servers": "primary:9092" });
    const cluster = embeddedCluster(3);
    registry.register("primary:9092", cluster);
    expect(await source.clusterId()).toBe(cluster.clusterId);
    await connector.close();
  });

  it("refuses bad Kafka settings when the mirror's source is opened", () => {
    const connector = new EmbeddedOrKafkaSourceConnector(new EmbeddedSourceRegistry());
    expect(() =>
      connector.connect("m", {
        "bootstrap.servers": "kafka:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "GSSAPI",
      }),
    ).toThrow(UnsupportedSourceSecurityError);
    expect(() => connector.connect("m", { "bootstrap.servers": "no-port" })).toThrow(/not host:port/);
  });

  it("passes the group listing's options on to a real Kafka source: a broker that is down is reported, not fatal", async () => {
    const connector = new EmbeddedOrKafkaSourceConnector(new EmbeddedSourceRegistry());
    const down = new Error("m: groups on source broker 2: Connection error: connect ECONNREFUSED");
    const app = { groupId: "app", offsets: [], active: false };
    // A Kafka source of two brokers, one down: as Kafka's ListConsumerGroupsResult, all() fails on it and
    // valid() with errors() gives the other broker's groups.
    connector.kafka.connect = () =>
      ({
        listGroupOffsets: async (options?: ListGroupOffsetsOptions) => {
          if (!options?.onError) throw down;
          options.onError(down);
          return [app];
        },
      }) as unknown as SourceCluster;
    const source = connector.connect("m", { "bootstrap.servers": "kafka:9092" });
    const errors: Error[] = [];
    expect(await source.listGroupOffsets({ onError: (e) => errors.push(e) })).toEqual([app]);
    expect(errors).toEqual([down]);
    await expect(source.listGroupOffsets()).rejects.toBe(down);
  });

  it("a closed source opens no connection again: a call on it fails retriable, as one on a closed kafkajs source", async () => {
    const broker = await fakeBroker(() => ({ topics: [] }));
    const connector = new EmbeddedOrKafkaSourceConnector(new EmbeddedSourceRegistry());
    try {
      // The engine closes a mirror's source when its connection configs change (or the mirror is deleted);
      // a metadata refresh still holding it asks it for the groups and ACLs next.
      const source = connector.connect("m", { "bootstrap.servers": `127.0.0.1:${broker.port}` });
      expect(await source.clusterId()).toBe("fake-cluster");
      await source.close?.();
      const connections = broker.accepted();
      const failure = await source.clusterId().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(KafkaError);
      expect(failure).toMatchObject({ errorName: "BROKER_NOT_AVAILABLE", retriable: true });
      expect((failure as Error).message).toMatch(/m: the source's connection was closed/);
      // Reopened, it was a connection with the old settings (old credentials) that nothing ever closed.
      expect(broker.accepted()).toBe(connections);
    } finally {
      await connector.close();
      await broker.close();
    }
  });
});
