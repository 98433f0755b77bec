import { MIRROR_CONFIG_KEYS } from "../admin/mirror-config";
import type { SourceCluster, SourceConnector } from "../ports";

/**
 * The mirror's own settings: what to mirror and how, never how to reach the source. A change of one of
 * them (or the source cluster id pinned at creation) keeps the connection.
 */
const ENGINE_KEYS: ReadonlySet<string> = new Set(
  Object.values(MIRROR_CONFIG_KEYS).filter((key) => key !== MIRROR_CONFIG_KEYS.BOOTSTRAP_SERVERS),
);

/**
 * One source connection per mirror, reused across refreshes and admin calls (the metadata manager "keeps a
 * connection to every source cluster"). A change of how the source is reached (`bootstrap.servers`,
 * security, client settings) opens a new connection and closes the old one; a change of the mirror's own
 * settings does not.
 */
export class SourceConnections {
  private readonly connector: SourceConnector;
  private readonly open = new Map<string, { fingerprint: string; source: SourceCluster }>();

  constructor(connector: SourceConnector) {
    this.connector = connector;
  }

  /** The source of `mirror` for these configs, connecting (again) when how to reach it changed. */
  get(mirror: string, configs: Readonly<Record<string, string>>): SourceCluster {
    const fingerprint = connectionFingerprint(configs);
    const cached = this.open.get(mirror);
    if (cached && cached.fingerprint === fingerprint) return cached.source;
    const source = this.connector.connect(mirror, configs);
    this.open.set(mirror, { fingerprint, source });
    if (cached) closeQuietly(cached.source);
    return source;
  }

  /**
   * Runs `call` on a source reached with `configs` without touching the mirror's open connection: the
   * open one when `configs` reach the source the same way, else a new one, closed afterwards (a config
   * change is tried before it is stored; a refused one must not disturb the running mirror).
   */
  async probe<T>(
    mirror: string,
    configs: Readonly<Record<string, string>>,
    call: (source: SourceCluster) => Promise<T>,
  ): Promise<T> {
    const cached = this.open.get(mirror);
    if (cached && cached.fingerprint === connectionFingerprint(configs)) return call(cached.source);
    const source = this.connector.connect(mirror, configs, { quiet: true });
    try {
      return await call(source);
    } finally {
      closeQuietly(source);
    }
  }

  /** Forgets a deleted mirror's connection, and closes it. */
  drop(mirror: string): void {
    const cached = this.open.get(mirror);
    this.open.delete(mirror);
    if (cached) closeQuietly(cached.source);
  }
}

/** How `configs` reach the source: equal for two configs that differ only in the mirror's own settings. */
export function connectionFingerprint(configs: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.entries(configs)
      .filter(([key]) => !ENGINE_KEYS.has(key))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

/** Closes a source no one will ask again (calls still in flight on it fail, and are retried on the new one). */
function closeQuietly(source: SourceCluster): void {
  void source.close?.().catch(() => {});
}
