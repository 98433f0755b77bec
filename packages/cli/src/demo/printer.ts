/** Writes the demo's narrative: step headings, commands, results and checks. */
export class DemoPrinter {
  private step = 0;

  constructor(
    private readonly out: (text: string) => void,
    private readonly color: boolean,
  ) {}

  /** A numbered step heading. */
  heading(title: string): void {
    this.step++;
    this.out(`\n${this.paint("1", `${this.step}. ${title}`)}\n`);
  }

  /** A line of narrative. */
  line(text: string): void {
    this.out(`   ${text}\n`);
  }

  /** The equivalent operator command and its output line(s). */
  command(command: string, output: string): void {
    this.out(`   ${this.paint("2", `$ ${command}`)}\n`);
    for (const l of output.trimEnd().split("\n")) this.out(`   ${l}\n`);
  }

  /** A check result: ✓ or ✗ with its text. */
  check(ok: boolean, text: string): void {
    this.out(`   ${ok ? this.paint("32", "✓") : this.paint("31", "✗")} ${text}\n`);
  }

  /** Raw text (tables), indented. */
  block(text: string): void {
    for (const l of text.trimEnd().split("\n")) this.out(`   ${l}\n`);
  }

  private paint(code: string, text: string): string {
    return this.color ? `\u001b[${code}m${text}\u001b[0m` : text;
  }
}
