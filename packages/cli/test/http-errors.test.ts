import {
  MirrorCommandTimeoutError,
  SourceFailoverInProgressError,
  SourceUnreachableError,
} from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { BadRequestError, errorResponse } from "../src/node/http-errors";

const kafka = (name: string, code = -1) => new KafkaError(name, code, false, `${name} happened`);

describe("the admin API's error statuses", () => {
  it.each([
    ["SASL_AUTHENTICATION_FAILED", 401],
    ["TOPIC_AUTHORIZATION_FAILED", 403],
    ["MISDIRECTED_REQUEST", 421],
    ["UNKNOWN_MIRROR", 404],
    ["UNSAFE_TRUNCATION", 409],
    ["MIRROR_LOOP", 409],
    ["NETWORK_EXCEPTION", 424],
    ["COORDINATOR_NOT_AVAILABLE", 503],
    ["COORDINATOR_LOAD_IN_PROGRESS", 503],
    ["REQUEST_TIMED_OUT", 504],
    ["INVALID_CONFIG", 400],
  ])("%s answers %i with the error's name, code and message", (name, status) => {
    expect(errorResponse(kafka(name, 7))).toEqual({
      status,
      body: { error: { name, code: 7, message: `${name} happened` } },
    });
  });

  it("answers 424 when the source is still failing the topic over, as when it is unreachable", () => {
    const inProgress = new SourceFailoverInProgressError(
      "dr",
      new KafkaError(
        "MIRROR_FAILOVER_IN_PROGRESS",
        -1,
        true,
        "mirror 'back', topic id x partition 0 is failing over (STOPPING)",
      ),
    );
    const response = errorResponse(inProgress);
    expect(response.status).toBe(424);
    expect(response.body.error.name).toBe("MIRROR_FAILOVER_IN_PROGRESS");
    expect(response.body.error.message).toMatch(
      /^The source cluster of mirror 'dr' answered that mirror 'back'.*Nothing was changed/,
    );
    expect(inProgress.retriable).toBe(true);
    expect(errorResponse(new SourceUnreachableError("dr", "a:9092", new Error("refused"))).status).toBe(424);
  });

  it("answers 504, retriable, when an admin operation's commands were not recorded within defaultApiTimeoutMs", () => {
    const timedOut = new MirrorCommandTimeoutError(
      "dr",
      "pause",
      ["orders"],
      60_000,
      "__mirror_state-1 (leader 0)",
      "the topics' mirror.name already asks for it",
    );
    const response = errorResponse(timedOut);
    expect(response.status).toBe(504);
    expect(response.body.error).toMatchObject({ name: "REQUEST_TIMED_OUT", code: 7 });
    expect(response.body.error.message).toMatch(/It may still take effect/);
  });

  it("answers 400 for a malformed request and 500, INTERNAL_ERROR, for anything untyped", () => {
    expect(errorResponse(new BadRequestError("topic is required")).status).toBe(400);
    expect(errorResponse(new Error("boom"))).toEqual({
      status: 500,
      body: { error: { name: "INTERNAL_ERROR", code: -1, message: "boom" } },
    });
  });
});
