import { describe, expect, it } from "vitest";
import {
  decodeConsumerGroupDescribeV0,
  decodeFetch,
  encodeConsumerGroupDescribeV0,
  encodeFetch,
} from "../src/requests";
import { Reader, Writer } from "../src/wire";

/** The one partition the encoded fetches ask for. */
const PARTITION = {
  partition: 2,
  currentLeaderEpoch: 5,
  fetchOffset: 42n,
  lastFetchedEpoch: 4,
  partitionMaxBytes: 500,
};

describe("Fetch v12 (flexible) bytes", () => {
  it("encodes a consumer fetch: header tags, replica -1, session id and epoch, last fetched epoch, forgotten partitions", () => {
    const request = encodeFetch(
      {
        maxWaitMs: 100,
        minBytes: 1,
        maxBytes: 1000,
        isolationLevel: 0,
        sessionId: 77,
        sessionEpoch: 3,
        forgottenTopics: [{ topic: "gone", partitions: [4, 1] }],
        topics: [
          {
            topic: "t",
            partitions: [PARTITION],
          },
        ],
      },
      12,
    );
    expect(request).toMatchObject({ apiKey: 1, apiVersion: 12 });
    const r = new Reader(request.body);
    expect(r.uvarint()).toBe(0); // request header v2's tagged fields
    expect([r.int32(), r.int32(), r.int32(), r.int32(), r.int8(), r.int32(), r.int32()]).toEqual([
      -1, 100, 1, 1000, 0, 77, 3,
    ]);
    expect(r.uvarint()).toBe(2); // one topic
    expect(r.compactString()).toBe("t");
    expect(r.uvarint()).toBe(2); // one partition
    expect([r.int32(), r.int32(), r.int64(), r.int32(), r.int64(), r.int32()]).toEqual([
      2,
      5,
      42n,
      4,
      -1n,
      500,
    ]);
    r.tags(); // the partition's
    r.tags(); // the topic's
    const forgotten = r.compactArray((fr) => {
      const t = { topic: fr.compactString(), partitions: fr.compactArray((x) => x.int32()) };
      fr.tags();
      return t;
    });
    expect(forgotten).toEqual([{ topic: "gone", partitions: [4, 1] }]);
    expect(r.compactString()).toBe(""); // RackId
  });

  it("decodes the DivergingEpoch tag and keeps the records section as a view of the response", () => {
    const records = Buffer.from("0123456789", "latin1");
    const body = new Writer()
      .noTags() // response header v1
      .int32(7) // throttle
      .int16(0)
      .int32(12345) // SessionId
      .compactArray([0], (w) => {
        w.compactString("t").compactArray([0], (pw) => {
          pw.int32(3).int16(0).int64(100n).int64(90n).int64(10n);
          pw.compactArray([{ pid: 5n, first: 20n }], (aw, a) => {
            aw.int64(a.pid).int64(a.first).noTags();
          });
          pw.int32(-1);
          pw.uvarint(records.length + 1).bytes(records);
          // Tagged fields: 0 = DivergingEpoch {epoch, endOffset, tags}.
          const diverging = new Writer().int32(4).int64(77n).noTags().finish();
          pw.uvarint(1).uvarint(0).uvarint(diverging.length).bytes(diverging);
        });
        w.noTags();
      })
      .noTags()
      .finish();
    const response = decodeFetch(body, 12);
    expect(response.throttleTimeMs).toBe(7);
    expect(response.sessionId).toBe(12345);
    const p = response.topics[0]!.partitions[0]!;
    expect(p).toMatchObject({
      partition: 3,
      errorCode: 0,
      highWatermark: 100n,
      lastStableOffset: 90n,
      logStartOffset: 10n,
      divergingEpoch: { epoch: 4, endOffset: 77n },
      abortedTransactions: [{ producerId: 5n, firstOffset: 20n }],
    });
    expect(p.records.toString("latin1")).toBe("0123456789");
    expect(p.records.buffer).toBe(body.buffer);
  });
});

describe("Fetch v13 (topics by id, KIP-516) bytes", () => {
  const id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  const gone = "11111111-2222-3333-4444-555555555555";
  const request = (topicId: string | undefined) => ({
    maxWaitMs: 100,
    minBytes: 1,
    maxBytes: 1000,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: 0,
    forgottenTopics: [{ topic: "gone", topicId: gone, partitions: [1] }],
    topics: [
      {
        topic: "t",
        ...(topicId === undefined ? {} : { topicId }),
        partitions: [PARTITION],
      },
    ],
  });

  it("names each topic and forgotten topic by its 16 id bytes instead of its name", () => {
    const encoded = encodeFetch(request(id), 13);
    expect(encoded).toMatchObject({ apiKey: 1, apiVersion: 13 });
    const r = new Reader(encoded.body);
    r.tags();
    r.take(4 * 4 + 1 + 4 + 4);
    expect(r.uvarint()).toBe(2);
    expect(r.uuid()).toBe(id);
    expect(r.uvarint()).toBe(2);
    expect([r.int32(), r.int32(), r.int64(), r.int32(), r.int64(), r.int32()]).toEqual([
      2,
      5,
      42n,
      4,
      -1n,
      500,
    ]);
    r.tags();
    r.tags();
    const forgotten = r.compactArray((fr) => {
      const t = { topicId: fr.uuid(), partitions: fr.compactArray((x) => x.int32()) };
      fr.tags();
      return t;
    });
    expect(forgotten).toEqual([{ topicId: gone, partitions: [1] }]);
    expect(r.compactString()).toBe("");
  });

  it("refuses a v13 topic without an id rather than sending a name the broker would misread", () => {
    expect(() => encodeFetch(request(undefined), 13)).toThrow(/by id: 't' has none/);
  });

  it("decodes the topic id of each answered topic (the name is the caller's to fill in) and the preferred read replica", () => {
    const body = new Writer()
      .noTags()
      .int32(0)
      .int16(0)
      .int32(9)
      .compactArray([0], (w) => {
        w.uuid(id).compactArray([0], (pw) => {
          pw.int32(2).int16(100).int64(-1n).int64(-1n).int64(-1n);
          pw.uvarint(0); // no aborted transactions (null)
          pw.int32(2); // PreferredReadReplica (KIP-392)
          pw.uvarint(0); // null records
          pw.noTags();
        });
        w.noTags();
      })
      .noTags()
      .finish();
    const response = decodeFetch(body, 13);
    expect(response.topics).toEqual([
      {
        topic: "",
        topicId: id,
        partitions: [
          {
            partition: 2,
            errorCode: 100,
            highWatermark: -1n,
            lastStableOffset: -1n,
            logStartOffset: -1n,
            abortedTransactions: null,
            preferredReadReplica: 2,
            records: Buffer.alloc(0),
          },
        ],
      },
    ]);
  });
});

describe("ConsumerGroupDescribe v0 (KIP-848) bytes", () => {
  it("asks for one group without authorized operations, and reads its error, state and member count", () => {
    const request = encodeConsumerGroupDescribeV0("readers");
    expect([request.apiKey, request.apiVersion]).toEqual([69, 0]);
    const r = new Reader(request.body);
    r.tags();
    expect(r.compactArray((g) => g.compactString())).toEqual(["readers"]);
    expect(r.int8()).toBe(0);
    // An answer as Kafka 4 writes it, up to the members (whose contents the decoder does not read).
    const body = new Writer()
      .noTags()
      .int32(7)
      .uvarint(2) // one group
      .int16(0)
      .compactString(null)
      .compactString("readers")
      .compactString("Stable")
      .int32(3)
      .int32(3)
      .compactString("uniform")
      .uvarint(3) // two members
      .finish();
    expect(decodeConsumerGroupDescribeV0(body)).toEqual({
      throttleTimeMs: 7,
      group: { errorCode: 0, groupId: "readers", groupState: "Stable", members: 2 },
    });
  });
});
