import type { Pool, PoolClient, QueryResultRow } from "pg";
import { AssetQuotaError } from "./asset-quota.js";
import { FencedError } from "./fenced-error.js";
import { StoreDatabaseError } from "./postgres-errors.js";

/** Thrown inside a transaction to roll it back with a reason of the store's own (not a driver failure). */
export class StoreRefusal extends Error {}

/** Runs a statement inside a transaction. */
export type Query = <R extends QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

/**
 * The pool as the store uses it: statements and transactions whose driver
 * failures come out as StoreDatabaseError (named by `target`, never with a
 * password), while the store's own refusals (a fenced write, a deleted
 * conversation, an asset over its quota) come out as they were thrown.
 */
export class PostgresDatabase {
  constructor(
    readonly pool: Pool,
    /** host:port/database, for messages. */
    readonly target: string,
  ) {}

  async query<R extends QueryResultRow>(what: string, text: string, values?: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(text, values)).rows;
    } catch (error) {
      throw new StoreDatabaseError(this.target, what, error);
    }
  }

  /**
   * BEGIN, `work`, COMMIT; ROLLBACK when anything throws. A COMMIT whose
   * answer is lost with the connection leaves the outcome unknown, as with
   * any database; it is reported as a failure.
   */
  async transaction<T>(what: string, work: (query: Query) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new StoreDatabaseError(this.target, what, error);
    }
    let broken: Error | undefined;
    const query: Query = async (text, values) => (await client.query(text, values)).rows;
    try {
      await client.query("BEGIN");
      const result = await work(query);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        // The connection is unusable: the pool must not hand it out again.
        broken = rollbackError;
      });
      if (error instanceof StoreRefusal || error instanceof FencedError || error instanceof AssetQuotaError) throw error;
      throw new StoreDatabaseError(this.target, what, error);
    } finally {
      client.release(broken);
    }
  }
}
