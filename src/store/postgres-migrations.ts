import type { Pool, PoolClient } from "pg";

/**
 * The PostgreSQL store's schema, as numbered migrations. open() applies the
 * ones a database lacks, each once, in its own transaction, recorded in
 * agentwire_migrations. A session-level advisory lock serialises instances
 * that start together: the second waits, then finds the work done. A
 * released migration is never edited; a change is a new entry.
 *
 * Why the types are what they are:
 * - `json`, not `jsonb`, for records and metadata: jsonb refuses the string
 *   "\u0000", which a message may hold, and records are read whole, never
 *   searched inside; the few fields we look up have columns of their own.
 * - text columns that are compared or ordered use COLLATE "C": byte order is
 *   JavaScript's string order for these ASCII keys, so listing pages match
 *   the embedded store's order (newest createdAt first, ties by id) whatever
 *   the database's locale.
 * - records.id and tool_call_id are lookup keys (see keyOf in
 *   postgres-record-rows.ts), the record itself is `body`.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "conversations, records and assets",
    sql: `
      CREATE TABLE agentwire_conversations (
        id text COLLATE "C" PRIMARY KEY,
        created_at text COLLATE "C" NOT NULL,
        -- The Conversation without recordCount (the column below is the truth for it).
        metadata json NOT NULL,
        record_count integer NOT NULL DEFAULT 0,
        seq_reserved bigint NOT NULL DEFAULT 0,
        run_state json,
        -- Raised by claim(); a fenced handle writes only while it still holds its token.
        fence bigint NOT NULL DEFAULT 0,
        stored_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX agentwire_conversations_newest ON agentwire_conversations (created_at DESC, id DESC);

      CREATE TABLE agentwire_records (
        conversation_id text COLLATE "C" NOT NULL REFERENCES agentwire_conversations (id) ON DELETE CASCADE,
        position integer NOT NULL,
        id text COLLATE "C" NOT NULL,
        body json NOT NULL,
        assistant boolean NOT NULL,
        tool_call_id text COLLATE "C",
        PRIMARY KEY (conversation_id, position),
        UNIQUE (conversation_id, id)
      );
      -- The last assistant message (where the open round of tool calls starts).
      CREATE INDEX agentwire_records_assistant ON agentwire_records (conversation_id, position) WHERE assistant;
      CREATE INDEX agentwire_records_tool_call ON agentwire_records (conversation_id, tool_call_id, position)
        WHERE tool_call_id IS NOT NULL;

      CREATE TABLE agentwire_assets (
        conversation_id text COLLATE "C" NOT NULL REFERENCES agentwire_conversations (id) ON DELETE CASCADE,
        asset_id text COLLATE "C" NOT NULL,
        info json NOT NULL,
        bytes bytea NOT NULL,
        PRIMARY KEY (conversation_id, asset_id)
      );
    `,
  },
  {
    version: 2,
    name: "asset usage",
    // The bytes of all assets, kept in one row so an upload checks the store-wide quota in
    // O(1) under that row's lock (a sum over every asset would grow with the store). Deletes
    // — a conversation's cascade included — and TRUNCATE keep it true by trigger, so nothing
    // that removes assets can forget it. octet_length of a bytea reads its stored length
    // without fetching the value.
    sql: `
      CREATE TABLE agentwire_asset_usage (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        bytes bigint NOT NULL
      );
      INSERT INTO agentwire_asset_usage (bytes) SELECT COALESCE(sum(octet_length(bytes)), 0) FROM agentwire_assets;

      CREATE FUNCTION agentwire_assets_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE agentwire_asset_usage SET bytes = bytes - (SELECT COALESCE(sum(octet_length(bytes)), 0) FROM gone);
        RETURN NULL;
      END $$;
      CREATE TRIGGER agentwire_assets_deleted AFTER DELETE ON agentwire_assets
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION agentwire_assets_deleted();

      CREATE FUNCTION agentwire_assets_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE agentwire_asset_usage SET bytes = 0;
        RETURN NULL;
      END $$;
      CREATE TRIGGER agentwire_assets_truncated AFTER TRUNCATE ON agentwire_assets
        FOR EACH STATEMENT EXECUTE FUNCTION agentwire_assets_truncated();
    `,
  },
  {
    version: 3,
    name: "conversation documents",
    // Documents kept beside a conversation's records, read and written whole (ConversationHandle.readDocument):
    // the file checkpoints and the last rewind. Gone with the conversation by the cascade.
    sql: `
      CREATE TABLE agentwire_documents (
        conversation_id text COLLATE "C" NOT NULL REFERENCES agentwire_conversations (id) ON DELETE CASCADE,
        name text COLLATE "C" NOT NULL,
        body json NOT NULL,
        PRIMARY KEY (conversation_id, name)
      );
    `,
  },
  {
    version: 4,
    name: "sub-agent parents",
    // conversation.list { parentConversationId }: a sub-agent's parent, set at insert (it never changes), with an
    // index in listing order. Rows stored before hold no sub-agents, but are read once in case metadata names one.
    sql: `
      ALTER TABLE agentwire_conversations ADD COLUMN parent_id text COLLATE "C";
      UPDATE agentwire_conversations SET parent_id = metadata->>'parentConversationId' WHERE metadata->>'parentConversationId' IS NOT NULL;
      CREATE INDEX agentwire_conversations_children ON agentwire_conversations (parent_id, created_at DESC, id DESC)
        WHERE parent_id IS NOT NULL;
    `,
  },
];

/** Any constant works as long as every agentwire uses the same: it names "agentwire's schema" in pg_locks. */
const MIGRATION_LOCK_KEY = 0x61_67_77_72; // "agwr"

/** The database holds a schema newer than this build knows: refusing beats writing rows it cannot read. */
export class SchemaTooNewError extends Error {}

/**
 * Applies the migrations the database lacks; returns the versions this call
 * applied (empty when another instance, or an earlier start, did).
 */
export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      return await applyMissing(client, migrations);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch((error: Error) => {
        // Dropping the connection releases the lock.
        broken = error;
      });
    }
  } catch (error) {
    broken ??= error as Error;
    throw error;
  } finally {
    client.release(broken);
  }
}

async function applyMissing(client: PoolClient, migrations: readonly Migration[]): Promise<number[]> {
  await client.query(`
    CREATE TABLE IF NOT EXISTS agentwire_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
  const { rows } = await client.query<{ version: number }>("SELECT version FROM agentwire_migrations");
  const done = new Set(rows.map((row) => row.version));
  const newest = Math.max(0, ...migrations.map((m) => m.version));
  const unknown = [...done].filter((version) => version > newest);
  if (unknown.length > 0) {
    throw new SchemaTooNewError(
      `the database has agentwire schema version ${Math.max(...unknown)}, newer than this agentwire knows (${newest}); run a newer agentwire`,
    );
  }
  const applied: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(migration.version)) continue;
    await client.query("BEGIN");
    try {
      await client.query(migration.sql);
      await client.query("INSERT INTO agentwire_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name]);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
    applied.push(migration.version);
  }
  return applied;
}
