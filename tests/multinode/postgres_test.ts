/**
 * Two real Tessera processes on one PostgreSQL database, each with its own data
 * directory and a copy of the same key file (the PostgreSQL run only), spoken
 * to over HTTP: see _scenarios.ts.
 *
 * @module
 */
import { TEST_ENGINE } from "../test_db.ts";
import { runPairScenarios } from "./_scenarios.ts";

Deno.test({
  name: "two nodes on one PostgreSQL database keep the multi-node guarantees",
  ignore: TEST_ENGINE !== "postgres",
  fn: (t) => runPairScenarios(t, "postgres"),
});
