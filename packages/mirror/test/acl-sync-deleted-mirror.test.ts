import { describe, expect, it } from "vitest";
import { acl, MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

/**
 * A deleted mirror owns no ACL binding: what it synced becomes the cluster's own (as its topics become
 * ordinary ones), so a mirror created again under the same name never deletes them as "its own" when its
 * source lacks them, and another mirror whose source has them adopts them.
 */
describe("ACL bindings of a deleted mirror", () => {
  async function failedOverAndDeleted() {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    sourceTopic(env.source, "t");
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    env.coordinators.advance("PREPARING", "MIRRORING");
    const onGroup = acl("GROUP", "app");
    const onTopic = acl("TOPIC", "t");
    env.source.authorizer.createAcls([onGroup, onTopic]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.ownerOf(onGroup)).toBe("m1");
    // Failed over: the clients of `t` (group `app`) now use this cluster; the old primary drops its ACLs.
    await env.admin.removeTopics("m1", "t");
    env.coordinators.advance("STOPPING", "STOPPED");
    env.source.authorizer.deleteAcls([onGroup, onTopic]);
    await env.admin.deleteMirror("m1");
    return { env, onGroup, onTopic };
  }

  it("are the cluster's own once it is deleted", async () => {
    const { env, onGroup, onTopic } = await failedOverAndDeleted();
    expect(env.destination.authorizer.ownerOf(onGroup)).toBeUndefined();
    expect(env.destination.authorizer.ownerOf(onTopic)).toBeUndefined();
    expect(env.destination.authorizer.describeAcls()).toEqual([onGroup, onTopic]);
  });

  it("stay when a mirror of the same name, created again, syncs from a source without them", async () => {
    const { env, onGroup, onTopic } = await failedOverAndDeleted();
    // The name is used again, to mirror another topic: its GROUP scope reaches `app`, its source lacks it.
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    sourceTopic(env.source, "u");
    await env.admin.addTopics("m1", "u", { replicationFactor: 1 });
    env.coordinators.advance("PREPARING", "MIRRORING");
    const report = await env.manager.refresh("m1");
    expect(report?.acls).toEqual({ created: [], deleted: [] });
    expect(env.destination.authorizer.describeAcls()).toEqual([onGroup, onTopic]);
  });
});
