import { KafkaError } from "@cluster-mirror/protocol";
import type { FastifyReply } from "fastify";
import type { ConsoleConsumer, ConsumedMessage, ConsumeOutcome } from "./console-consumer";
import { type ErrorBody, errorResponse } from "./http-errors";
import { NDJSON, NODE_HEADER, toJson } from "./wire";

/**
 * The lines of a streamed `POST /v1/consume`, in order: `consumer` (the id `POST /v1/consume/stop` takes),
 * one `message` per message as it is consumed, then `end` (how it ended) or `error` (why it failed); empty
 * lines between them are heartbeats.
 */
export type ConsumeStreamLine =
  | { consumer: string }
  | { message: ConsumedMessage }
  | { end: ConsumeOutcome }
  | (ErrorBody & { status: number });

/** No consume with that id is running for the caller (it ended, or never was): Kafka's UNKNOWN_MEMBER_ID. */
export class UnknownConsumerError extends KafkaError {
  constructor(id: string) {
    super(
      "UNKNOWN_MEMBER_ID",
      25,
      false,
      `no consume '${id}' is running on this node for you (it has ended: its group committed every message it sent)`,
    );
  }
}

/** How often a streamed consume with nothing to send sends an empty line. */
export const CONSUME_HEARTBEAT_MS = 15_000;

/** The streamed consumes a node runs, by id, so that a Ctrl-C of their CLI can stop them. */
export class ConsumeSessions {
  private readonly running = new Map<
    string,
    { principal: string; consumer: ConsoleConsumer; done: Promise<ConsumeOutcome> }
  >();
  private ids = 0;

  /**
   * `heartbeatMs`: how often an idle stream gets an empty line, so that neither side's HTTP client gives up
   * on a body silent for longer than its idle limit (fetch's bodyTimeout is 300 s) while the consume waits
   * up to `--timeout-ms` for a message.
   */
  constructor(private readonly heartbeatMs = CONSUME_HEARTBEAT_MS) {}

  /**
   * Stops consume `id` of `principal` after the first `printed` messages it sent, and resolves once the
   * group committed them and the consumer left the group.
   */
  stop(id: string, principal: string, printed: number): Promise<ConsumeOutcome> {
    const session = this.running.get(id);
    if (session === undefined || session.principal !== principal) throw new UnknownConsumerError(id);
    session.consumer.stop(printed);
    return session.done;
  }

  /**
   * Runs `consumer`, writing each message to `reply` as a line as soon as it is consumed (waiting while the
   * client is behind), then the `end` or `error` line; the response ends with the consume.
   */
  async stream(reply: FastifyReply, principal: string, consumer: ConsoleConsumer): Promise<void> {
    const id = String(++this.ids);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      "content-type": `${NDJSON}; charset=utf-8`,
      "cache-control": "no-cache",
      [NODE_HEADER]: "1",
    });
    const write = async (line: ConsumeStreamLine): Promise<void> => {
      if (res.destroyed || res.write(`${toJson(line)}\n`)) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.once("drain", done);
        res.once("close", done);
      });
    };
    // Written and registered in one go: a stop naming this id always finds it.
    res.write(`${toJson({ consumer: id } satisfies ConsumeStreamLine)}\n`);
    const heartbeat = setInterval(() => {
      if (res.writableLength === 0 && !res.destroyed) res.write("\n");
    }, this.heartbeatMs);
    const done = consumer.run((message) => write({ message }));
    this.running.set(id, { principal, consumer, done });
    try {
      await write({ end: await done });
    } catch (error) {
      const { status, body } = errorResponse(error);
      await write({ ...body, status });
    } finally {
      clearInterval(heartbeat);
      this.running.delete(id);
      res.end();
      // Fastify does not log a hijacked request's completion: logged here, as every request is.
      reply.log.info(
        { event: "request.completed", res: { statusCode: 200 }, responseTime: reply.elapsedTime },
        "streamed consume completed",
      );
    }
  }
}
