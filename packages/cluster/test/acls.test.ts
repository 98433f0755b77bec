import { describe, expect, it } from "vitest";
import { type AclBinding, Authorizer, ClusterError } from "../src/index";

const allow = (over: Partial<AclBinding>): AclBinding => ({
  resourceType: "TOPIC",
  resourceName: "orders",
  patternType: "LITERAL",
  principal: "User:alice",
  host: "*",
  operation: "READ",
  permissionType: "ALLOW",
  ...over,
});

describe("Authorizer", () => {
  it("allows everything when disabled, as a broker without an authorizer does", () => {
    const a = new Authorizer();
    expect(
      a.authorize({ principal: "User:x", operation: "WRITE", resourceType: "TOPIC", resourceName: "t" }),
    ).toBe(true);
  });

  it("denies by default, allows a matching ALLOW, and lets DENY win", () => {
    const a = new Authorizer({ enabled: true });
    const req = {
      principal: "User:alice",
      operation: "READ",
      resourceType: "TOPIC",
      resourceName: "orders",
    } as const;
    expect(a.authorize(req)).toBe(false);
    a.createAcls([allow({})]);
    expect(a.authorize(req)).toBe(true);
    expect(a.authorize({ ...req, principal: "User:bob" })).toBe(false);
    a.createAcls([allow({ principal: "User:*", operation: "ALL", permissionType: "DENY" })]);
    expect(a.authorize(req)).toBe(false);
  });

  it("matches prefixed patterns and the literal wildcard, and implies DESCRIBE from READ", () => {
    const a = new Authorizer({ enabled: true });
    a.createAcls([
      allow({ resourceName: "pay.", patternType: "PREFIXED", operation: "WRITE" }),
      allow({ resourceType: "GROUP", resourceName: "*", operation: "READ" }),
    ]);
    const t = (resourceName: string, operation: "WRITE" | "DESCRIBE" | "DELETE") =>
      a.authorize({ principal: "User:alice", operation, resourceType: "TOPIC", resourceName });
    expect(t("pay.eu", "WRITE")).toBe(true);
    expect(t("pay.eu", "DESCRIBE")).toBe(true);
    expect(t("pay.eu", "DELETE")).toBe(false);
    expect(t("payroll", "WRITE")).toBe(false);
    expect(
      a.authorize({ principal: "User:alice", operation: "READ", resourceType: "GROUP", resourceName: "g" }),
    ).toBe(true);
  });

  it("honours super users and allow.everyone.if.no.acl.found", () => {
    const a = new Authorizer({ enabled: true, superUsers: ["User:admin"], allowEveryoneIfNoAclFound: true });
    a.createAcls([allow({ resourceName: "guarded" })]);
    const req = (principal: string, resourceName: string) =>
      a.authorize({ principal, operation: "WRITE", resourceType: "TOPIC", resourceName });
    expect(req("User:admin", "guarded")).toBe(true);
    expect(req("User:bob", "open")).toBe(true);
    expect(req("User:bob", "guarded")).toBe(false);
  });

  it("describes and deletes by filter, and refuses malformed bindings with a typed error", () => {
    const a = new Authorizer({ enabled: true });
    a.createAcls([allow({}), allow({}), allow({ resourceName: "other", operation: "WRITE" })]);
    expect(a.describeAcls()).toHaveLength(2);
    expect(a.describeAcls({ operation: "WRITE" })).toHaveLength(1);
    expect(a.deleteAcls([{ resourceName: "orders" }])).toHaveLength(1);
    expect(a.describeAcls()).toHaveLength(1);
    let err: unknown;
    try {
      a.createAcls([allow({ principal: "alice" })]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClusterError);
    expect((err as ClusterError).message).toContain("User:alice");
  });

  it("filters by pattern type as Kafka does: MATCH finds every binding that applies to a resource, ANY compares names", () => {
    const a = new Authorizer({ enabled: true });
    const literal = allow({ resourceName: "orders-eu" });
    const wildcard = allow({ resourceName: "*", principal: "User:bob" });
    const prefix = allow({ resourceName: "orders-", patternType: "PREFIXED", operation: "WRITE" });
    const exactPrefix = allow({
      resourceName: "orders-eu",
      patternType: "PREFIXED",
      principal: "User:carol",
    });
    const other = allow({ resourceName: "payments" });
    const longerPrefix = allow({ resourceName: "orders-eu-1", patternType: "PREFIXED" });
    const group = allow({ resourceType: "GROUP", resourceName: "orders-eu" });
    a.createAcls([literal, wildcard, prefix, exactPrefix, other, longerPrefix, group]);
    // What kafka-acls --list --topic orders-eu --resource-pattern-type match shows.
    expect(
      a.describeAcls({ resourceType: "TOPIC", resourceName: "orders-eu", patternType: "MATCH" }),
    ).toEqual([literal, wildcard, prefix, exactPrefix]);
    // ANY (and no pattern type): every pattern type, the name compared exactly.
    expect(a.describeAcls({ resourceType: "TOPIC", resourceName: "orders-eu", patternType: "ANY" })).toEqual([
      literal,
      exactPrefix,
    ]);
    expect(a.describeAcls({ resourceType: "TOPIC", resourceName: "orders-eu" })).toEqual([
      literal,
      exactPrefix,
    ]);
    expect(a.describeAcls({ patternType: "MATCH" })).toHaveLength(7);
    expect(
      a.deleteAcls([{ resourceType: "TOPIC", resourceName: "orders-eu", patternType: "MATCH" }]),
    ).toEqual([literal, wildcard, prefix, exactPrefix]);
    expect(a.describeAcls()).toEqual([other, longerPrefix, group]);
  });

  it("refuses a CLUSTER binding not named kafka-cluster, as Kafka's CreateAcls does (it would never apply)", () => {
    const a = new Authorizer({ enabled: true });
    const onCluster = allow({ resourceType: "CLUSTER", resourceName: "my-cluster", operation: "ALTER" });
    expect(() => a.createAcls([onCluster])).toThrowError(
      expect.objectContaining({
        errorName: "INVALID_REQUEST",
        message: expect.stringContaining("the only valid name for the CLUSTER resource is kafka-cluster"),
      }),
    );
    expect(a.describeAcls()).toEqual([]);
    a.createAcls([{ ...onCluster, resourceName: "kafka-cluster" }]);
    expect(
      a.authorize({
        principal: "User:alice",
        operation: "ALTER",
        resourceType: "CLUSTER",
        resourceName: "kafka-cluster",
      }),
    ).toBe(true);
  });

  it("check() throws the authorization error of the resource type", () => {
    const a = new Authorizer({ enabled: true });
    expect(() =>
      a.check({ principal: "User:bob", operation: "READ", resourceType: "GROUP", resourceName: "g" }),
    ).toThrowError(expect.objectContaining({ errorName: "GROUP_AUTHORIZATION_FAILED", code: 30 }));
  });
});
