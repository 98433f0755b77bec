import { afterEach, describe, expect, it } from "vitest";
import {
  BIN,
  CLI_TEST_TIMEOUT_MS,
  failureLine,
  killAll,
  run,
  spawnBin,
  tempDir,
  waitForLine,
} from "./cli-harness";

afterEach(() => killAll());

// `cluster-mirror acls --list` narrows what it lists by the flags given, as kafka-acls.sh --list does
// (AclCommand.listAcls: a ResourcePatternFilter per --topic/--group/..., of --resource-pattern-type, LITERAL by
// default): `--list --topic orders` lists the bindings of the literal topic 'orders', not every binding.
describe("cluster-mirror acls --list with filters", () => {
  it(
    "lists only the bindings matching --topic, --resource-pattern-type, the principal, --operation and --host",
    async () => {
      const child = spawnBin(BIN.clusterMirror, [
        ...["node", "--data-dir", tempDir("cm-acls-list"), "--port", "0", "--metrics-port", "0"],
        ...["--source", "primary=1", "--brokers", "1", "--state-partitions", "1", "--no-fsync"],
      ]);
      const { adminPort } = JSON.parse(await waitForLine(child, /"event":"node\.started"/)) as {
        adminPort: number;
      };
      const acls = (...args: string[]) =>
        run(BIN.clusterMirror, [
          "acls",
          "--bootstrap-server",
          `:${adminPort}`,
          "--cluster",
          "primary",
          ...args,
        ]);
      const add = async (...args: string[]) => expect((await acls("--add", ...args)).code).toBe(0);
      await add("--allow-principal", "User:alice", "--operation", "WRITE", "--topic", "orders");
      await add("--allow-principal", "User:alice", "--operation", "READ", "--topic", "ord");
      await add(
        ...["--allow-principal", "User:alice", "--operation", "READ", "--topic", "ord"],
        "--host",
        "10.0.0.1",
      );
      await add(...["--allow-principal", "User:carol", "--operation", "READ", "--topic", "ord"]);
      await add(
        ...["--allow-principal", "User:alice", "--operation", "READ", "--topic", "or"],
        "--resource-pattern-type",
        "prefixed",
      );
      await add("--deny-principal", "User:bob", "--operation", "READ", "--topic", "payments");
      await add("--allow-principal", "User:alice", "--operation", "DESCRIBE", "--cluster-resource");
      const listed = async (...args: string[]) => {
        const r = await acls("--list", ...args);
        expect(r.code).toBe(0);
        return r.stdout.trim().split("\n");
      };

      expect(await listed()).toHaveLength(7);
      expect(await listed("--topic", "orders")).toEqual([
        "ALLOW User:alice WRITE on TOPIC LITERAL 'orders' from host *",
      ]);
      expect(await listed("--topic", "orders", "--resource-pattern-type", "match")).toEqual([
        "ALLOW User:alice WRITE on TOPIC LITERAL 'orders' from host *",
        "ALLOW User:alice READ on TOPIC PREFIXED 'or' from host *",
      ]);
      expect(await listed("--resource-pattern-type", "prefixed")).toEqual([
        "ALLOW User:alice READ on TOPIC PREFIXED 'or' from host *",
      ]);
      expect(await listed("--deny-principal", "User:bob")).toEqual([
        "DENY User:bob READ on TOPIC LITERAL 'payments' from host *",
      ]);
      expect(await listed("--cluster-resource")).toEqual([
        "ALLOW User:alice DESCRIBE on CLUSTER LITERAL 'kafka-cluster' from host *",
      ]);
      expect(
        await listed("--topic", "ord", "--allow-principal", "User:alice", "--operation", "READ"),
      ).toEqual([
        "ALLOW User:alice READ on TOPIC LITERAL 'ord' from host *",
        "ALLOW User:alice READ on TOPIC LITERAL 'ord' from host 10.0.0.1",
      ]);
      expect(await listed("--topic", "ord", "--host", "10.0.0.1")).toEqual([
        "ALLOW User:alice READ on TOPIC LITERAL 'ord' from host 10.0.0.1",
      ]);
      expect(await listed("--topic", "nosuch")).toEqual([
        "No ACL bindings matching the flags given on primary.",
      ]);

      // --remove with --host removes the binding of that host only, not those of every host.
      const removed = await acls(
        ...["--remove", "--topic", "ord", "--allow-principal", "User:alice", "--operation", "READ"],
        ...["--host", "10.0.0.1"],
      );
      expect(removed.stdout).toBe(
        "Removed 1 ACL binding(s) from primary\n  ALLOW User:alice READ on TOPIC LITERAL 'ord' from host 10.0.0.1\n",
      );
      expect(await listed("--topic", "ord")).toEqual([
        "ALLOW User:alice READ on TOPIC LITERAL 'ord' from host *",
        "ALLOW User:carol READ on TOPIC LITERAL 'ord' from host *",
      ]);

      // A filter type is no pattern a binding can have: --add refuses it before it reaches the node.
      const match = await acls(
        ...["--add", "--allow-principal", "User:alice", "--operation", "READ", "--topic", "x"],
        ...["--resource-pattern-type", "match"],
      );
      expect(match.code).toBe(2);
      expect(failureLine(match)).toBe(
        "Error: --resource-pattern-type must be literal or prefixed with --add, got 'match'",
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
