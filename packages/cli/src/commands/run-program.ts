import { type Command, CommanderError } from "commander";
import { describeFailure, EXIT } from "./cli-errors";

/**
 * Parses and runs a commander program; prints failures as one `Error: ...` line on stderr and resolves
 * with the exit code (0, 1 operation error, 2 usage error). Help and version print and resolve 0.
 */
export async function runProgram(program: Command, argv: readonly string[]): Promise<number> {
  const silence = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({ writeErr: () => {}, outputError: () => {} });
    for (const sub of cmd.commands) silence(sub);
  };
  silence(program);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return EXIT.ok;
  } catch (error) {
    if (
      error instanceof CommanderError &&
      (error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.code === "commander.help")
    ) {
      return EXIT.ok;
    }
    const { line, exitCode } = describeFailure(error);
    process.stderr.write(`${line}\n`);
    return exitCode;
  }
}
