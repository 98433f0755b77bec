/**
 * Lets a CLI's output go to a reader that stopped reading (`kafka-mirrors --describe | head -1`): the
 * write fails with EPIPE, which Node reports as an unhandled 'error' event, a stack trace and exit code 1
 * after the command itself succeeded. Kafka's tools (Java's PrintStream) drop output nobody reads and
 * end as the command does; so do these, with the command's own exit code.
 */
export function ignoreClosedStdout(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") return;
    throw error;
  });
}
