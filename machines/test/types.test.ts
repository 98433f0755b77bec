import type { MirrorPartitionStateName, MirrorPartitionStateValue } from "@cluster-mirror/protocol";
import { NON_RETRYABLE_ATTEMPT as PROTOCOL_NON_RETRYABLE } from "@cluster-mirror/protocol";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type LIFECYCLE_STATES,
  type LifecycleState,
  type MirrorPartitionStateRecord,
  NON_RETRYABLE_ATTEMPT,
} from "../src/index";

describe("types shared with the protocol package", () => {
  it("lifecycle states and the record are the protocol's", () => {
    expectTypeOf<LifecycleState>().toEqualTypeOf<MirrorPartitionStateName>();
    expectTypeOf<(typeof LIFECYCLE_STATES)[number]>().toEqualTypeOf<MirrorPartitionStateName>();
    expectTypeOf<MirrorPartitionStateRecord>().toEqualTypeOf<Readonly<MirrorPartitionStateValue>>();
    expect(NON_RETRYABLE_ATTEMPT).toBe(PROTOCOL_NON_RETRYABLE);
  });
});
