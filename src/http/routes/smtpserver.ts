import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam } from "../params.ts";
import {
  deleteSmtpServer,
  listSmtpServers,
  saveSmtpServer,
  sendTestEmail,
} from "../../domain/smtp/mod.ts";

/** `/smtpserver/`: SMTP server definitions used by notifications. */
export const smtpServerRoutes = new Hono<AppEnv>();

smtpServerRoutes.get("/", async (c) => ok(c, await listSmtpServers(c.get("deps"))));

smtpServerRoutes.post("/send_test_email", async (c) => {
  return ok(c, await sendTestEmail(c.get("deps"), c.get("params")));
});

smtpServerRoutes.get("/:identifier", async (c) => {
  return ok(c, await listSmtpServers(c.get("deps"), pathParam(c, "identifier")));
});

smtpServerRoutes.post("/:identifier", async (c) => {
  const identifier = pathParam(c, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  // privacyIDEA answers whether a row was written (`send_result(r > 0)`), not its id
  return ok(c, await saveSmtpServer(c.get("deps"), identifier, c.get("params")) > 0);
});

smtpServerRoutes.delete("/:identifier", async (c) => {
  const identifier = pathParam(c, "identifier");
  c.get("audit").info = identifier.slice(0, 200);
  return ok(c, await deleteSmtpServer(c.get("deps"), identifier) > 0);
});
