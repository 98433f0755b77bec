import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import * as fs from "../src/platform/fs.browser";
import * as fsNode from "../src/platform/fs.node";
import * as path from "../src/platform/path.browser";
import * as pathNode from "../src/platform/path.node";

describe("browser platform seams of @cluster-mirror/log", () => {
  it("stand in for every file-system function file storage uses", () => {
    expect(Object.keys(fs).sort()).toEqual(Object.keys(fsNode).sort());
    expect(Object.keys(path).sort()).toEqual(Object.keys(pathNode).sort());
  });

  it("throw a non-retriable KAFKA_STORAGE_ERROR saying to keep the logs in memory", () => {
    let thrown: unknown;
    try {
      fs.openSync("/data/orders-0/00000000000000000000.log", "r");
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(KafkaError);
    expect(thrown).toMatchObject({ errorName: "KAFKA_STORAGE_ERROR", code: 56, retriable: false });
    expect((thrown as Error).message).toMatch(
      /^fs\.openSync is not available in a browser build: .*leave dataDir unset/,
    );
  });
});
