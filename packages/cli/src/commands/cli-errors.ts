import { CommanderError } from "commander";

/** Bad command-line input (missing or conflicting flags, malformed values): exit code 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** The operation was tried and failed (unknown mirror, bad regex, node unreachable): exit code 1. */
export class OperationError extends Error {
  readonly exitCode = 1;
}

/** Exit codes of the CLIs. */
export const EXIT = { ok: 0, operation: 1, usage: 2 } as const;

/** The one `Error: ...` line a failure prints on stderr (newlines folded), and its exit code. */
export function describeFailure(error: unknown): { line: string; exitCode: number } {
  if (error instanceof CommanderError) {
    const text = error.message.replace(/^error:\s*/i, "");
    return { line: `Error: ${oneLine(capitalize(text))} (see --help for usage)`, exitCode: EXIT.usage };
  }
  const message = error instanceof Error ? error.message : String(error);
  const exitCode = error instanceof UsageError ? EXIT.usage : EXIT.operation;
  return { line: `Error: ${oneLine(message)}`, exitCode };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
