import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { yubikeyValidate } from "../../domain/yubico_validation/mod.ts";
import { hiddenTokenError } from "../auth.ts";
import { ok } from "../envelope.ts";
import { pollChallenges, pushPost } from "../../domain/push/mod.ts";
import { u2fFacets } from "../../domain/token/mod.ts";
import { tiqrRequest } from "../../domain/tiqr/mod.ts";

/** `/ttype/`: protocol endpoints of token types (spec 11 §6.4). */
export const ttypeRoutes = new Hono<AppEnv>();

/** The request's parameters as strings (the protocol signs their text). */
function stringParams(c: Context<AppEnv>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.get("params"))) {
    if (typeof v === "string") out[k] = v;
    else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
  }
  return out;
}

/** Token policy `hide_specific_error_message_for_ttype`: privacyIDEA's generic error. */
const HIDDEN_TTYPE_ERROR = {
  action: "hide_specific_error_message_for_ttype",
  message: "Failed special token function",
  code: -311,
};

async function yubikey(c: Context<AppEnv>): Promise<Response> {
  let answer;
  try {
    answer = await yubikeyValidate(c.get("deps"), {
      params: stringParams(c),
      clientIp: c.get("clientIp"),
      userAgent: c.get("userAgent"),
    });
  } catch (err) {
    throw await hiddenTokenError(c, err, HIDDEN_TTYPE_ERROR);
  }
  const audit = c.get("audit");
  audit.serial = answer.serial ?? "";
  audit.tokenType = "yubikey";
  audit.user = answer.user?.login ?? "";
  audit.realm = answer.user?.realm ?? "";
  audit.resolver = answer.user?.resolver ?? "";
  audit.info = `${answer.status}: ${answer.reason}`;
  audit.outcome = answer.status === "OK";
  // the Yubico protocol's answer, not the JSON envelope
  return c.text(answer.text, 200, { "cache-control": "no-store" });
}

ttypeRoutes.get("/yubikey", yubikey);
ttypeRoutes.post("/yubikey", yubikey);

/** `GET /ttype/push`: the app's signed poll for open challenges (spec 13 §1.8). */
async function pushPoll(c: Context<AppEnv>): Promise<Response> {
  const params = stringParams(c);
  const audit = c.get("audit");
  audit.serial = (params.serial ?? "").slice(0, 40);
  audit.tokenType = "push";
  let list;
  try {
    list = await pollChallenges(c.get("deps"), params);
  } catch (err) {
    throw await hiddenTokenError(c, err, HIDDEN_TTYPE_ERROR);
  }
  audit.info = `open challenges: ${list.length}`;
  audit.outcome = true;
  return await ok(c, list);
}

/** `POST /ttype/push`: enrolment step 2, the app's answer, a new Firebase token (§1.4, §1.9). */
async function pushAnswer(c: Context<AppEnv>): Promise<Response> {
  const params = stringParams(c);
  const audit = c.get("audit");
  audit.serial = (params.serial ?? "").slice(0, 40);
  audit.tokenType = "push";
  let answer;
  try {
    answer = await pushPost(c.get("deps"), params);
  } catch (err) {
    throw await hiddenTokenError(c, err, HIDDEN_TTYPE_ERROR);
  }
  audit.outcome = answer.value;
  return await ok(c, answer.value, { detail: answer.detail });
}

ttypeRoutes.get("/push", pushPoll);
ttypeRoutes.post("/push", pushAnswer);

/**
 * `/ttype/tiqr`: the TiQR app's metadata, enrolment and authentication requests
 * (spec 14 §7); raw JSON or plain text, as the app reads it, errors in the envelope.
 */
async function tiqr(c: Context<AppEnv>): Promise<Response> {
  const params = stringParams(c);
  const audit = c.get("audit");
  audit.serial = (params.serial ?? "").slice(0, 40);
  audit.tokenType = "tiqr";
  let answer;
  try {
    answer = await tiqrRequest(c.get("deps"), params);
  } catch (err) {
    throw await hiddenTokenError(c, err, HIDDEN_TTYPE_ERROR);
  }
  if (answer.serial !== "") audit.serial = answer.serial.slice(0, 40);
  if (answer.kind === "json") {
    audit.outcome = true;
    return c.json(answer.body, 200, { "cache-control": "no-store" });
  }
  audit.info = answer.text;
  audit.outcome = answer.isSuccess;
  return c.text(answer.text, 200, { "cache-control": "no-store" });
}

ttypeRoutes.get("/tiqr", tiqr);
ttypeRoutes.post("/tiqr", tiqr);

/** `GET|POST /ttype/u2f`: the trusted facets of the U2F appId (spec 14 §8.2 point 4). */
async function u2fTrustedFacets(c: Context<AppEnv>): Promise<Response> {
  const audit = c.get("audit");
  audit.tokenType = "u2f";
  const facets = await u2fFacets(c.get("deps"), {
    clientIp: c.get("clientIp"),
    userAgent: c.get("userAgent"),
  });
  audit.outcome = true;
  // the FIDO facet list itself, not the JSON envelope (browsers read it as it is)
  return c.body(JSON.stringify(facets), 200, {
    "content-type": "application/fido.trusted-apps+json",
  });
}

// privacyIDEA's /ttype/<type> answers both methods alike
ttypeRoutes.get("/u2f", u2fTrustedFacets);
ttypeRoutes.post("/u2f", u2fTrustedFacets);
