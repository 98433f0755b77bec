import { describe, expect, it } from "vitest";
import { CurrentTopicIds } from "../src/current-topic-ids";

describe("CurrentTopicIds", () => {
  it("asks once for the questions of one turn, and again for a question asked after the request went", async () => {
    const asked: string[][] = [];
    const ids = new CurrentTopicIds(async (topics) => {
      asked.push([...topics]);
      return new Map(topics.filter((t) => t !== "gone").map((t) => [t, `id-${t}`]));
    });
    const first = await Promise.all([ids.of("a"), ids.of("b"), ids.of("a"), ids.of("gone")]);
    expect(first).toEqual(["id-a", "id-b", "id-a", undefined]);
    expect(asked).toEqual([["a", "b", "gone"]]);
    expect(await ids.of("c")).toBe("id-c");
    expect(asked).toEqual([["a", "b", "gone"], ["c"]]);
  });

  it("a failed request rejects the questions it carried, and the next turn asks again", async () => {
    let fail = true;
    const ids = new CurrentTopicIds(async (topics) => {
      if (fail) throw new Error("source down");
      return new Map(topics.map((t) => [t, "x"]));
    });
    const results = await Promise.allSettled([ids.of("a"), ids.of("b")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await ids.of("a")).toBe("x");
  });
});
