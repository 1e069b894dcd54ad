import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { pathParam } from "../params.ts";
import { missingParameter, ParameterError } from "../../errors.ts";
import {
  deleteSubscription,
  listSubscriptions,
  uploadSubscription,
} from "../../domain/subscription/mod.ts";
import { MAX_FILE_BYTES } from "../../domain/subscription/file.ts";

/** `/subscriptions/`: upload, list and delete vendor-signed subscriptions (spec 06 §4). */
export const subscriptionRoutes = new Hono<AppEnv>();

// admin JWT plus the admin action `managesubscription` when admin policies are defined

subscriptionRoutes.get("/", async (c) => {
  return ok(c, await listSubscriptions(c.get("deps")));
});

subscriptionRoutes.post("/", async (c) => {
  const file = c.get("params").file;
  let text: string;
  if (file instanceof File) {
    if (file.size > MAX_FILE_BYTES) {
      throw new ParameterError(
        `Cannot parse subscription file: larger than ${MAX_FILE_BYTES} bytes`,
      );
    }
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(await file.arrayBuffer());
    } catch {
      throw new ParameterError("Cannot parse subscription file: invalid UTF-8");
    }
  } else if (typeof file === "string" && file !== "") {
    text = file;
  } else if (file === undefined || file === null || file === "") {
    throw missingParameter("file");
  } else {
    throw new ParameterError('Cannot parse parameter "file": expected a file or a string');
  }
  const id = await uploadSubscription(c.get("deps"), text);
  c.get("audit").info = `subscription id ${id}`;
  return ok(c, id);
});

subscriptionRoutes.get("/:application", async (c) => {
  return ok(c, await listSubscriptions(c.get("deps"), pathParam(c, "application")));
});

subscriptionRoutes.delete("/:application", async (c) => {
  const application = pathParam(c, "application");
  c.get("audit").info = application.slice(0, 900);
  return ok(c, await deleteSubscription(c.get("deps"), application));
});
