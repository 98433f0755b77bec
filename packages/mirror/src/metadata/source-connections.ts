import type { SourceCluster, SourceConnector } from "../ports";

/**
 * One source connection per mirror, reused across refreshes and admin calls (the metadata manager "keeps a
 * connection to every source cluster"). A changed mirror definition opens a new connection.
 */
export class SourceConnections {
  private readonly connector: SourceConnector;
  private readonly open = new Map<string, { fingerprint: string; source: SourceCluster }>();

  constructor(connector: SourceConnector) {
    this.connector = connector;
  }

  /** The source of `mirror` for these configs, connecting (again) when they changed. */
  get(mirror: string, configs: Readonly<Record<string, string>>): SourceCluster {
    const fingerprint = JSON.stringify(Object.entries(configs).sort(([a], [b]) => (a < b ? -1 : 1)));
    const cached = this.open.get(mirror);
    if (cached && cached.fingerprint === fingerprint) return cached.source;
    const source = this.connector.connect(mirror, configs);
    this.open.set(mirror, { fingerprint, source });
    return source;
  }

  /** Forgets a deleted mirror's connection. */
  drop(mirror: string): void {
    this.open.delete(mirror);
  }
}
