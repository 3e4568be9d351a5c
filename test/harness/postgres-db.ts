/**
 * A PostgreSQL database of its own for one test file: created before its
 * tests, dropped after them, with the stores opened on it closed after each
 * test. The server is the machine's (127.0.0.1:5432, database `test`) unless
 * AGENTWIRE_TEST_POSTGRES_URL names another whose role may CREATE DATABASE.
 * Where none answers, the suites skip and say how to run them.
 */
import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { PostgresConversationStore, type PostgresStoreOptions } from "../../src/store/postgres-store.js";
import { redactPassword } from "../../src/config/url-password.js";

export const POSTGRES_ADMIN_URL = process.env.AGENTWIRE_TEST_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;

const HOW_TO_RUN =
  "start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start, as .ci/run does) " +
  "or set AGENTWIRE_TEST_POSTGRES_URL to a database whose role may CREATE DATABASE";

/** Whether the admin database answers within two seconds; when not, prints one line saying how to run `file`'s tests. */
export async function postgresReachable(file: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch (error) {
    console.log(`${file}: PostgreSQL tests skipped: ${redactPassword(POSTGRES_ADMIN_URL)} does not answer (${(error as Error).message}); ${HOW_TO_RUN}`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The admin URL pointed at another database on the same server. */
function urlOf(database: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>, url = POSTGRES_ADMIN_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  /** The database's URL (set once the file's tests begin). */
  readonly url: string;
  readonly name: string;
  /** A store on it, closed after the test unless closed before. */
  open(options?: PostgresStoreOptions): Promise<PostgresConversationStore>;
  close(store: PostgresConversationStore): Promise<void>;
  /** One statement on the database, outside any store. */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
}

/**
 * `resetEach`: empty the store's tables before every test (suites whose
 * tests reuse ids); otherwise the database keeps what earlier tests left.
 */
export function usePostgresDatabase(prefix: string, options: { resetEach?: boolean } = {}): TestDatabase {
  const name = `agentwire_t_${prefix}_${randomBytes(4).toString("hex")}`;
  const url = urlOf(name);
  const opened: PostgresConversationStore[] = [];
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    await admin((client) => client.query(`CREATE DATABASE ${name}`));
    pool = new pg.Pool({ connectionString: url, max: 2 });
    // pool.end() resolves before its connections have closed, and the DROP … WITH (FORCE) right after
    // terminates one still closing: pg-pool reports that as an 'error' event, which without a
    // listener is an uncaught exception failing the whole run (seen once under a full npm test).
    pool.on("error", () => {});
  });
  if (options.resetEach) {
    beforeEach(async () => {
      await pool!.query(`DO $$ BEGIN
        IF to_regclass('agentwire_conversations') IS NOT NULL THEN TRUNCATE agentwire_conversations CASCADE; END IF;
      END $$`);
    });
  }
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close().catch(() => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });
  return {
    url,
    name,
    async open(storeOptions) {
      const store = new PostgresConversationStore(url, storeOptions);
      await store.open();
      opened.push(store);
      return store;
    },
    async close(store) {
      const i = opened.indexOf(store);
      if (i >= 0) opened.splice(i, 1);
      await store.close();
    },
    async query(text, values) {
      return (await pool!.query(text, values)).rows;
    },
  };
}
