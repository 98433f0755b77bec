/** One sample of a Prometheus metric family. */
export interface PrometheusSample {
  labels: Readonly<Record<string, string>>;
  value: number | bigint;
}

/** One metric family in the Prometheus text exposition format (version 0.0.4). */
export interface PrometheusFamily {
  name: string;
  help: string;
  type: "gauge" | "counter";
  samples: readonly PrometheusSample[];
}

/** Renders families as Prometheus text: `# HELP`, `# TYPE`, then one line per sample, ending in a newline. */
export function renderPrometheus(families: readonly PrometheusFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(",");
      lines.push(`${family.name}${labels === "" ? "" : `{${labels}}`} ${String(sample.value)}`);
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
