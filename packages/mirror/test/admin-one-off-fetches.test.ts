import { describe, expect, it } from "vitest";
import { parseMirrorConfig } from "../src/admin/mirror-config";
import { sourceRefusesRead } from "../src/admin/source-read-check";
import { verifyMirror } from "../src/admin/verify";
import type { SourceFetchRequest } from "../src/ports";
import { EmbeddedSourceCluster } from "../src/source/embedded-source";
import { bind, leaderBatches, MIRROR, mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

/**
 * The admin API's one-off fetches (--recover's READ probe, verify's batch comparison) go out on the
 * mirror's long-lived source connection: each must be sessionless (KIP-227: session id 0, epoch -1), or a
 * Kafka source would keep a fetch session (a slot of its session cache) for it per broker long after.
 */
function recordingSource(env: ReturnType<typeof mirrorEnv>, principal?: string) {
  const inner = new EmbeddedSourceCluster(env.source, principal === undefined ? {} : { principal });
  const fetches: SourceFetchRequest[] = [];
  const source = {
    ...bind(inner),
    fetch: (request: SourceFetchRequest) => {
      fetches.push(request);
      return inner.fetch(request);
    },
  };
  return { source, fetches };
}

describe("the admin API's one-off fetches", () => {
  it("--recover's READ probe fetches sessionless under its own client id, and names a refused READ", async () => {
    const env = mirrorEnv();
    await produce(env, valuesBatch(["a", "b"]));
    env.source.authorizer.configure({ enabled: true });
    const grant = (operation: "DESCRIBE" | "READ") =>
      env.source.authorizer.createAcls([
        {
          resourceType: "TOPIC",
          resourceName: TOPIC,
          patternType: "LITERAL",
          principal: "User:alice",
          host: "*",
          operation,
          permissionType: "ALLOW",
        },
      ]);
    grant("DESCRIBE");
    const { source, fetches } = recordingSource(env, "User:alice");

    const refusal = await sourceRefusesRead(source, "dr", TOPIC, env.topicId, 0, 2n);
    expect(refusal).toMatchObject({ errorName: "TOPIC_AUTHORIZATION_FAILED" });
    expect(refusal?.message).toMatch(/User:alice may not READ TOPIC 'orders'/);
    grant("READ");
    expect(await sourceRefusesRead(source, "dr", TOPIC, env.topicId, 0, 2n)).toBeUndefined();

    expect(fetches).toHaveLength(2);
    for (const f of fetches) {
      expect(f).toMatchObject({ clientId: "cluster-mirror-dr-recover", sessionless: true, maxBytes: 1 });
      expect(f.partitions).toEqual([
        expect.objectContaining({ topic: TOPIC, partition: 0, fetchOffset: 2n }),
      ]);
    }
  });

  it("verify compares batches with sessionless fetches", async () => {
    const env = mirrorEnv();
    await produce(env, valuesBatch(["a", "b"]));
    await produce(env, valuesBatch(["c"]));
    const copy = env.destination.leaderFor(TOPIC, 0);
    for (const b of leaderBatches(env.source)) copy.appendAsIs(TOPIC, 0, Buffer.from(b.buffer));
    const { source, fetches } = recordingSource(env);

    const def = parseMirrorConfig(MIRROR, { "bootstrap.servers": "source:9092" });
    const verification = await verifyMirror(env.destination, def, source);
    expect(verification.checks.find((c) => c.check === "batches")).toMatchObject({ ok: true });
    expect(fetches.length).toBeGreaterThan(0);
    for (const f of fetches)
      expect(f).toMatchObject({ clientId: "cluster-mirror-verify", sessionless: true });
  });
});
