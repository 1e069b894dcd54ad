/**
 * Two real Tessera processes on one SQLite file (the SQLite run only), spoken
 * to over HTTP: see _scenarios.ts.
 *
 * @module
 */
import { TEST_ENGINE } from "../test_db.ts";
import { runPairScenarios } from "./_scenarios.ts";

Deno.test({
  name: "two processes on one SQLite file keep the multi-node guarantees",
  ignore: TEST_ENGINE !== "sqlite",
  fn: (t) => runPairScenarios(t, "sqlite"),
});
