/**
 * What only the PostgreSQL store does (the shared contract is in
 * store-contract.test.ts): migrations once per database however many
 * instances start together, gapless positions under writers in separate
 * processes' worth of pools, fencing tokens, counts that follow other
 * instances, and a clear refusal when the database cannot be reached.
 *
 * Needs PostgreSQL (test/harness/postgres-db.ts); skipped, saying how to run
 * it, where none answers.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseCli } from "../../src/cli-options.js";
import { reportJson, reportLines } from "../../src/config/config-report.js";
import { FencedError } from "../../src/store/fenced-error.js";
import { MIGRATIONS, migrate } from "../../src/store/postgres-migrations.js";
import { PostgresConversationStore } from "../../src/store/postgres-store.js";
import { redactPassword } from "../../src/config/url-password.js";
import { describeTarget, withDefaultUser } from "../../src/store/postgres-url.js";
import { StoreUnavailableError } from "../../src/store/store-unavailable-error.js";
import { eventually } from "../harness/eventually.js";
import { POSTGRES_ADMIN_URL, postgresReachable, usePostgresDatabase } from "../harness/postgres-db.js";
import { assistantMessage, conversation, message, range, toolCall } from "../harness/store-records.js";

const pgUp = await postgresReachable("postgres-store.test.ts");
/** One database for the suites below but the migrations' (which needs a new one), emptied before each test. */
const db = pgUp ? usePostgresDatabase("store", { resetEach: true }) : (undefined as never);

describe.skipIf(!pgUp)("PostgreSQL store: migrations", () => {
  const fresh = usePostgresDatabase("migrate");

  it("applies each migration once when two instances open a new database at the same moment, and none on the next open", async () => {
    const a = new PostgresConversationStore(fresh.url);
    const b = new PostgresConversationStore(fresh.url);
    await Promise.all([a.open(), b.open()]);
    try {
      // One of them did the work under the advisory lock; the other found it done.
      expect([a.appliedMigrations, b.appliedMigrations].map((v) => [...v]).sort()).toEqual([[], [1, 2, 3, 4]]);
      const rows = await fresh.query<{ version: number }>("SELECT version FROM agentwire_migrations ORDER BY version");
      expect(rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
      // Both can work on the schema at once.
      await a.create(conversation("from-a"));
      expect(await b.get("from-a")).toBeDefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    const c = await fresh.open();
    expect(c.appliedMigrations).toEqual([]);
    expect(c.count()).toBe(1);
  });

  it("refuses a database whose schema is newer than this build, changing nothing", async () => {
    await fresh.open(); // schema current
    await fresh.query("INSERT INTO agentwire_migrations (version, name) VALUES (999, 'from the future')");
    try {
      const store = new PostgresConversationStore(fresh.url);
      const error = await store.open().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(/schema version 999, newer than this agentwire knows \(4\)/);
    } finally {
      await fresh.query("DELETE FROM agentwire_migrations WHERE version = 999");
    }
  });
});

describe.skipIf(!pgUp)("PostgreSQL store: the asset usage migration", () => {
  const old = usePostgresDatabase("assetsv1");

  it("counts the assets a database of schema version 1 already holds, and keeps the count through deletes and TRUNCATE", async () => {
    const pool = new pg.Pool({ connectionString: old.url, max: 1 });
    try {
      await migrate(pool, MIGRATIONS.filter((m) => m.version === 1));
    } finally {
      await pool.end();
    }
    for (const id of ["old1", "old2"]) {
      await old.query("INSERT INTO agentwire_conversations (id, created_at, metadata) VALUES ($1, '2026-01-01', $2::json)", [id, JSON.stringify(conversation(id))]);
      await old.query("INSERT INTO agentwire_assets (conversation_id, asset_id, info, bytes) VALUES ($1, 'a_1', '{}', $2)", [id, Buffer.alloc(6)]);
    }
    const limits = { maxConversationAssetBytes: 100, maxTotalAssetBytes: 16 };
    const store = await old.open({ assetLimits: limits });
    expect(store.appliedMigrations).toEqual([2, 3, 4]);
    const usage = async () => Number((await old.query<{ bytes: string }>("SELECT bytes FROM agentwire_asset_usage"))[0].bytes);
    expect(await usage()).toBe(12);
    const fresh = await store.create(conversation("new"));
    const info = (n: number) => ({ assetId: `a_${n}`, mimeType: "image/png" as const, size: n, createdAt: "2026-01-01T00:00:00.000Z" });
    await expect(fresh.putAsset(info(5), Buffer.alloc(5))).rejects.toMatchObject({ limit: "maxTotalAssetBytes", actual: 17 });
    await fresh.putAsset(info(4), Buffer.alloc(4));
    expect(await usage()).toBe(16);
    // A conversation's delete cascades to its assets; the trigger takes their bytes off.
    await store.delete("old1");
    expect(await usage()).toBe(10);
    await old.query("TRUNCATE agentwire_conversations CASCADE");
    expect(await usage()).toBe(0);
  });
});

describe.skipIf(!pgUp)("PostgreSQL store: several instances on one database", () => {

  it("two instances racing for the last bytes of the asset quota store no more than it allows; a delete on one frees room for the other", async () => {
    const limits = { maxConversationAssetBytes: 100, maxTotalAssetBytes: 10 };
    const [a, b] = [await db.open({ assetLimits: limits }), await db.open({ assetLimits: limits })];
    await a.create(conversation("pa"));
    await b.create(conversation("pb"));
    const [ha, hb] = [(await a.get("pa"))!, (await b.get("pb"))!];
    const info = (n: number) => ({ assetId: `a_${n}`, mimeType: "image/png" as const, size: 2, createdAt: "2026-01-01T00:00:00.000Z" });
    // 20 bytes asked for at once through two pools; 10 fit.
    const outcomes = await Promise.allSettled(range(10).map((n) => (n % 2 ? ha : hb).putAsset(info(n), Buffer.alloc(2))));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(5);
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ limit: "maxTotalAssetBytes", max: 10 });
    const [stored] = await db.query<{ n: number; bytes: string }>("SELECT count(*)::int AS n, sum(octet_length(bytes)) AS bytes FROM agentwire_assets");
    expect(stored).toEqual({ n: 5, bytes: "10" });
    const aHeld = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM agentwire_assets WHERE conversation_id = 'pa'"))[0].n;
    expect(await b.delete("pb")).toBe(true);
    // What pb held is free for pa, through the other instance.
    await ha.putAsset(info(20), Buffer.alloc(10 - 2 * aHeld));
  });

  it("gives concurrent appends from two stores (two pools) positions 0..N-1, without gap or duplicate, each store's in its call order", async () => {
    const [a, b] = [await db.open(), await db.open()];
    await a.create(conversation("shared"));
    const [ha, hb] = [(await a.get("shared"))!, (await b.get("shared"))!];
    const n = 60;
    // One writer appends one at a time (a transaction each), the other in bursts (grouped transactions): they interleave.
    const one = (async () => {
      for (const i of range(n)) await ha.append(message(i, `a${i}`));
    })();
    const bursts = (async () => {
      for (let i = 0; i < n; i += 10) await Promise.all(range(10, i).map((k) => hb.append({ ...message(1000 + k), id: `b${k}` })));
    })();
    await Promise.all([one, bursts]);

    const rows = await db.query<{ position: number; id: string }>(
      "SELECT position, id FROM agentwire_records WHERE conversation_id = 'shared' ORDER BY position",
    );
    expect(rows.map((r) => r.position)).toEqual(range(2 * n));
    expect(new Set(rows.map((r) => r.id)).size).toBe(2 * n);
    expect(rows.map((r) => r.id).filter((id) => id.startsWith("m"))).toEqual(range(n).map((i) => `m${i}`));
    expect(rows.map((r) => r.id).filter((id) => id.startsWith("b"))).toEqual(range(n).map((i) => `b${i}`));
    // They did interleave (else this test proves nothing about concurrency).
    const firstB = rows.findIndex((r) => r.id.startsWith("b"));
    const lastM = rows.map((r) => r.id.startsWith("m")).lastIndexOf(true);
    expect(firstB).toBeLessThan(lastM);
    const [{ record_count }] = await db.query<{ record_count: number }>("SELECT record_count FROM agentwire_conversations WHERE id = 'shared'");
    expect(record_count).toBe(2 * n);
    // A handle reads what the database holds, in position order, as far as it has seen.
    expect(Math.max(ha.recordCount, hb.recordCount)).toBe(2 * n);
    const fresh = (await (await db.open()).get("shared"))!;
    expect((await fresh.readRecords()).map((r) => r.id)).toEqual(rows.map((r) => r.id));
  });

  it("a handle that finds the row moved by another instance takes its count, metadata and open round from the database", async () => {
    const [a, b] = [await db.open(), await db.open()];
    const ha = await a.create(conversation("moved"));
    await ha.append(assistantMessage(1));
    await ha.append(toolCall(2, "pending", null));
    expect(ha.openToolCalls.map((c) => c.id)).toEqual(["t2"]);
    const hb = (await b.get("moved"))!;
    expect(hb.openToolCalls.map((c) => c.id)).toEqual(["t2"]);
    await hb.append(assistantMessage(3));
    await hb.update({ ...hb.conversation, title: "renamed by b" });
    await ha.append(toolCall(4, "pending", null));
    expect(ha.recordCount).toBe(4);
    expect(ha.openToolCalls.map((c) => c.id)).toEqual(["t4"]);
    expect(ha.conversation.title).toBe("renamed by b");
    expect((await ha.readRecords()).map((r) => r.id)).toEqual(["m1", "t2", "m3", "t4"]);
    // refresh() catches up without writing: for an instance that only reads.
    await hb.append(message(5));
    expect(ha.recordCount).toBe(4);
    await ha.refresh();
    expect(ha.recordCount).toBe(5);
    expect(ha.openToolCalls).toEqual([]);
    expect((await ha.readRecords(4)).map((r) => r.id)).toEqual(["m5"]);
    // A deletion by the other instance: this handle's next write is refused.
    expect(await b.delete("moved")).toBe(true);
    await expect(ha.append(message(6))).rejects.toThrow(/was deleted/);
  });

  it("the same record id appended by two stores at once is stored once; the other append is refused as a duplicate, changing nothing", async () => {
    const [a, b] = [await db.open(), await db.open()];
    await a.create(conversation("dup"));
    const [ha, hb] = [(await a.get("dup"))!, (await b.get("dup"))!];
    for (const round of range(10)) {
      const results = await Promise.allSettled([ha.append(message(round, "from a")), hb.append(message(round, "from b"))]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(refused.reason.message).toBe(`record m${round} is already in the conversation`);
    }
    const rows = await db.query<{ position: number; id: string }>("SELECT position, id FROM agentwire_records WHERE conversation_id = 'dup' ORDER BY position");
    expect(rows).toEqual(range(10).map((n) => ({ position: n, id: `m${n}` })));
    // A replace from the other store finds the record wherever it was appended.
    await hb.replaceRecord(message(0, "replaced by b"));
    expect(await ha.readRecords(0, 1)).toEqual([message(0, "replaced by b")]);
  });

  it("count() follows other instances' creates and deletes once its answer is stale", async () => {
    const a = await db.open();
    const b = await db.open({ countRefreshMs: 1 });
    expect(b.count()).toBe(0);
    for (const i of range(3)) await a.create(conversation(`c${i}`));
    await a.delete("c0");
    await eventually(() => b.count() === 2, 3000, "count() of the other instance reaching 2");
    expect(a.count()).toBe(2);
  });
});

describe.skipIf(!pgUp)("PostgreSQL store: fencing tokens", () => {

  it("refuses every write of a handle whose token was superseded by a higher claim, changing nothing", async () => {
    const [a, b] = [await db.open(), await db.open()];
    await a.create(conversation("owned"));
    const ha = (await a.claim("owned", 1))!;
    await ha.append(message(0));

    const hb = (await b.claim("owned", 2))!;
    const queued = range(5, 1).map((i) => ha.append(message(i)));
    for (const write of queued) await expect(write).rejects.toBeInstanceOf(FencedError);
    const fenced = await ha.append(message(9)).catch((e: unknown) => e);
    expect(fenced).toMatchObject({ conversationId: "owned", token: 1, current: 2 });
    expect((fenced as Error).message).toMatch(/fencing token 2; a write with token 1 was refused/);
    await expect(ha.replaceRecord(message(0, "changed"))).rejects.toBeInstanceOf(FencedError);
    await expect(ha.update({ ...ha.conversation, title: "stale owner" })).rejects.toBeInstanceOf(FencedError);
    await expect(ha.reserveSeq(100)).rejects.toBeInstanceOf(FencedError);
    await expect(ha.updateRunState({ lastError: null, lastGeneration: null, autoConfirmRemaining: 5 })).rejects.toBeInstanceOf(FencedError);
    await expect(ha.putAsset({ assetId: "a_1", mimeType: "image/png", size: 1, createdAt: "2026-01-01T00:00:00.000Z" }, Uint8Array.from([1]))).rejects.toBeInstanceOf(FencedError);
    await expect(ha.writeDocument("checkpoints", { stale: true })).rejects.toBeInstanceOf(FencedError);
    // Nothing changed, in memory or in the database.
    expect(ha.recordCount).toBe(1);
    expect(ha.seqReserved).toBe(0);
    const [row] = await db.query<{ record_count: number; seq_reserved: string; fence: string; title: string }>(
      "SELECT record_count, seq_reserved, fence, metadata->>'title' AS title FROM agentwire_conversations WHERE id = 'owned'",
    );
    expect(row).toEqual({ record_count: 1, seq_reserved: "0", fence: "2", title: "title owned" });
    expect(await db.query("SELECT 1 FROM agentwire_assets")).toEqual([]);
    expect(await db.query("SELECT 1 FROM agentwire_documents")).toEqual([]);

    // The new owner writes; reads still work for the old one, and it may catch up.
    await hb.append(message(1, "from b"));
    expect((await ha.readRecords()).map((r) => r.id)).toEqual(["m0"]);
    await ha.refresh();
    expect((await ha.readRecords()).map((r) => r.id)).toEqual(["m0", "m1"]);
    expect((await hb.readRecords()).map((r) => r.id)).toEqual(["m0", "m1"]);
  });

  it("a claim with a lower token is refused; a higher one takes the conversation back; an unclaimed handle is not checked", async () => {
    const [a, b, single] = [await db.open(), await db.open(), await db.open()];
    await a.create(conversation("owned"));
    const ha = (await a.claim("owned", 5))!;
    await expect(b.claim("owned", 4)).rejects.toBeInstanceOf(FencedError);
    // Refused claims change nothing: a's token still holds.
    await ha.append(message(0));
    const hb = (await b.claim("owned", 6))!;
    await expect(ha.append(message(1))).rejects.toBeInstanceOf(FencedError);
    // Claiming again with a newer token rebinds the same handle.
    expect(await a.claim("owned", 7)).toBe(ha);
    expect(ha.fence).toBe(7);
    await ha.append(message(1));
    await expect(hb.append(message(2))).rejects.toBeInstanceOf(FencedError);
    // A store that never claims (one instance, no ownership) writes unchecked.
    const unfenced = (await single.get("owned"))!;
    await unfenced.append(message(2));
    expect(unfenced.recordCount).toBe(3);
    expect(await a.claim("nope", 8)).toBeUndefined();
    await expect(a.claim("owned", 0)).rejects.toThrow(RangeError);
  });
});

describe("PostgreSQL store: a database it cannot use", () => {
  it("an unreachable server stops open() with one line naming host, port and database and the driver's reason, never the password", async () => {
    const store = new PostgresConversationStore("postgres://agentwire:s3cret@127.0.0.1:1/nowhere", { connectTimeoutMs: 2000 });
    const error = (await store.open().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toBe("could not open the PostgreSQL store at 127.0.0.1:1/nowhere: connect ECONNREFUSED 127.0.0.1:1");
    expect(error.message).not.toContain("s3cret");
    await expect(store.get("c1")).rejects.toThrow(/not open/);
  });

  it.skipIf(!pgUp)("a database that does not exist is named with the server's reason", async () => {
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = "/agentwire_no_such_database";
    const store = new PostgresConversationStore(url.toString());
    const error = (await store.open().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toMatch(/^could not open the PostgreSQL store at .+\/agentwire_no_such_database: database "agentwire_no_such_database" does not exist$/);
  });
});

describe.skipIf(!pgUp)("PostgreSQL store: connections that break", () => {

  it("a write stuck behind another session's lock fails after statementTimeoutMs, changing nothing; the next one goes through", async () => {
    const store = await db.open({ statementTimeoutMs: 300 });
    const handle = await store.create(conversation("c1"));
    await handle.append(message(0));
    // Another session (a stuck process, an administrator's open transaction) holds the row.
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT 1 FROM agentwire_conversations WHERE id = 'c1' FOR UPDATE");
      const started = Date.now();
      const stuck = await handle.append(message(1)).catch((error: unknown) => error);
      expect(Date.now() - started).toBeLessThan(5000);
      expect((stuck as Error).message).toMatch(/statement timeout/);
      expect(handle.recordCount).toBe(1);
    } finally {
      await other.query("ROLLBACK").catch(() => undefined);
      await other.end();
    }
    await handle.append(message(1));
    expect((await handle.readRecords()).map((r) => r.id)).toEqual(["m0", "m1"]);
  });


  it("survives the server ending its connections (a restart, an administrator): a warning, no crash, and the next write works", async () => {
    const warnings: string[] = [];
    const store = await db.open({ onWarning: (message) => warnings.push(message) });
    const handle = await store.create(conversation("c1"));
    await handle.append(message(0));
    const ended = await db.query<{ ended: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'agentwire'",
    );
    expect(ended.length).toBeGreaterThan(0);
    await eventually(() => warnings.length > 0, 3000, "a warning about the broken idle connection");
    expect(warnings[0]).toMatch(/^PostgreSQL store 127\.0\.0\.1:5432\/agentwire_t_store_\w+: an idle connection failed \(terminating connection/);
    await handle.append(message(1));
    expect((await handle.readRecords()).map((r) => r.id)).toEqual(["m0", "m1"]);
  });
});

describe("PostgreSQL URLs in messages, configuration and flags", () => {
  it("never shows a password: not in the store's messages, not in agentwire config", () => {
    expect(redactPassword("postgres://ann:p%40ss@db.example:6543/agentwire?sslmode=require&password=x")).toBe(
      "postgres://ann:***@db.example:6543/agentwire?sslmode=require&password=***",
    );
    expect(redactPassword("postgresql://db.example/agentwire")).toBe("postgresql://db.example/agentwire");
    expect(redactPassword("postgres://ann:secret@[::1")).not.toContain("secret");
    expect(describeTarget("postgres://ann:secret@db.example:6543/agentwire")).toBe("db.example:6543/agentwire");
    expect(describeTarget("postgres:///agentwire?host=/run/postgresql", {})).toBe("/run/postgresql:5432/agentwire");
    expect(describeTarget("postgres://ann@db.example", { PGPORT: "7000" })).toBe("db.example:7000/ann");

    const parsed = parseCli(["config", "--store", "postgres://ann:secret@db.example:6543/agentwire"], {}, { discover: false });
    expect(parsed.config!.server.store).toBe("postgres://ann:secret@db.example:6543/agentwire");
    const line = reportLines(parsed.resolved!).find((l) => l.path === "server.store");
    expect(line).toEqual({ path: "server.store", value: "postgres://ann:***@db.example:6543/agentwire", source: "flag --store" });
    expect(reportJson(parsed.resolved!)).not.toContain("secret");
    // The default, and a value that is neither.
    expect(parseCli(["serve"], {}, { discover: false }).config!.server.store).toBe("lowdb");
    expect(() => parseCli(["serve", "--store", "mysql://db"], {}, { discover: false })).toThrow(/must be "lowdb" or a postgres:\/\/ URL/);
  });

  it("fills in the OS user when the URL, PGUSER and USER name none (node-postgres would send no user at all)", () => {
    expect(withDefaultUser("postgres://127.0.0.1/db", {})).toMatch(/^postgres:\/\/[^@/]+@127\.0\.0\.1\/db$/);
    expect(withDefaultUser("postgres://127.0.0.1/db", { USER: "ann" })).toBe("postgres://127.0.0.1/db");
    expect(withDefaultUser("postgres://bob@127.0.0.1/db", {})).toBe("postgres://bob@127.0.0.1/db");
  });

  it("chat and conversations take --store for their embedded server, and refuse it with --url", () => {
    const chat = parseCli(["chat", "--store", "postgres://127.0.0.1/agentwire", "hello"], {}, { discover: false }).chat;
    expect(chat!.target.embedded!.server.store).toBe("postgres://127.0.0.1/agentwire");
    expect(() => parseCli(["chat", "--url", "ws://127.0.0.1:1", "--store", "postgres://x/y", "hi"], {}, { discover: false })).toThrow(
      /--store is for the embedded server/,
    );
  });
});
