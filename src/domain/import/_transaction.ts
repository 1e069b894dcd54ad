/**
 * One database transaction around work that calls domain functions which
 * open transactions of their own: inside, `deps.db.transaction()` joins the
 * outer transaction instead of failing (Kysely has no nested transactions).
 * Everything commits together or nothing does.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { Db } from "../../db/schema.ts";

function joined(trx: Db): Db {
  const proxy: Db = new Proxy(trx, {
    get(target, prop) {
      if (prop === "transaction") {
        return () => ({ execute: <T>(work: (t: Db) => Promise<T>) => work(proxy) });
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return proxy;
}

/** Runs `work` with deps whose database is one open transaction (see the module doc). */
export async function inOneTransaction<T>(
  deps: Deps,
  work: (trxDeps: Deps) => Promise<T>,
): Promise<T> {
  return await deps.db.transaction().execute(async (trx) =>
    await work({ ...deps, db: joined(trx) })
  );
}
