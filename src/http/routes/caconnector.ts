import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam } from "../params.ts";
import {
  caConnectorSpecificOptions,
  currentCrl,
  currentCrlDer,
  deleteCaConnector,
  listCaConnectors,
  saveCaConnector,
} from "../../domain/caconnector/mod.ts";

/** `/caconnector/`: CA connector definitions used by certificate tokens (spec 14 §1.5). */
export const caconnectorRoutes = new Hono<AppEnv>();

caconnectorRoutes.get("/", async (c) => ok(c, await listCaConnectors(c.get("deps"))));

caconnectorRoutes.get("/specific/:catype", (c) => {
  return ok(c, caConnectorSpecificOptions(pathParam(c, "catype")));
});

caconnectorRoutes.get("/:name", async (c) => {
  return ok(c, await listCaConnectors(c.get("deps"), pathParam(c, "name")));
});

caconnectorRoutes.post("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 200);
  return ok(c, await saveCaConnector(c.get("deps"), name, c.get("params")));
});

caconnectorRoutes.delete("/:name", async (c) => {
  const name = pathParam(c, "name");
  c.get("audit").info = name.slice(0, 200);
  return ok(c, await deleteCaConnector(c.get("deps"), name));
});

/**
 * `/ca/<name>/crl`: the CRL of a local CA for relying parties (no JWT, like
 * a CRL distribution point): DER as `application/pkix-crl` (RFC 5280
 * §4.2.1.13), or PEM at `crl.pem`.
 */
export const caRoutes = new Hono<AppEnv>();

caRoutes.get("/:name/crl", async (c) => {
  const der = await currentCrlDer(c.get("deps"), pathParam(c, "name"));
  return c.body(der, 200, { "content-type": "application/pkix-crl" });
});

caRoutes.get("/:name/crl.pem", async (c) => {
  const pem = await currentCrl(c.get("deps"), pathParam(c, "name"));
  return c.body(pem, 200, { "content-type": "application/x-pem-file" });
});
