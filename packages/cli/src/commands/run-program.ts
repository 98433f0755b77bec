import { type Command, CommanderError } from "commander";
import { describeFailure, EXIT, UsageError } from "./cli-errors";
import { rejectEmptyFlags } from "./empty-flags";
import { rejectRepeatedFlags } from "./repeated-flags";

/** How {@link runProgram} checks flags before an action runs. */
export interface RunProgramOptions {
  /** Long flags whose empty value means something (e.g. `--value ''`, an empty message). */
  allowEmpty?: readonly string[];
}

/**
 * Parses and runs a commander program; prints failures as one `Error: ...` line on stderr and resolves
 * with the exit code (0, 1 operation error, 2 usage error). Help and version print and resolve 0. A flag
 * given an empty value, or a single-value flag given twice, is a usage error (see {@link rejectEmptyFlags},
 * {@link rejectRepeatedFlags}).
 */
export async function runProgram(
  program: Command,
  argv: readonly string[],
  options: RunProgramOptions = {},
): Promise<number> {
  const allowEmpty = new Set(options.allowEmpty ?? []);
  const silence = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({ writeErr: () => {}, outputError: () => {} });
    for (const sub of cmd.commands) silence(sub);
  };
  silence(program);
  // A hook on the root runs before the action of the program and of every subcommand.
  program.hook("preAction", (_root, action) => {
    rejectRepeatedFlags(action, argv);
    rejectEmptyFlags(action, allowEmpty);
  });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return EXIT.ok;
  } catch (error) {
    if (
      error instanceof CommanderError &&
      (error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        (error.code === "commander.help" && error.exitCode === 0))
    ) {
      return EXIT.ok;
    }
    const { line, exitCode } = describeFailure(
      error instanceof CommanderError && error.code === "commander.help"
        ? missingCommand(program, argv)
        : error,
    );
    process.stderr.write(`${line}\n`);
    return exitCode;
  }
}

/**
 * Commander answers a program with subcommands but none given (`cluster-mirror`, `cluster-mirror help
 * nosuch`) with its help on stderr, which the silenced output swallowed: say instead what to give.
 */
function missingCommand(program: Command, argv: readonly string[]): UsageError {
  const names = program.commands.map((c) => c.name()).filter((n) => n !== "help");
  const asked = argv[0] === "help" ? argv[1] : undefined;
  const what = asked === undefined ? "no command given" : `unknown command '${asked}'`;
  return new UsageError(
    `${what}: use one of ${names.join(", ")} (${program.name()} --help describes them, ${program.name()} COMMAND --help lists a command's flags)`,
  );
}
