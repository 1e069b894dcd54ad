import { type Context, Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { authenticationOf, ok } from "../envelope.ts";
import { boolParam, pathParam, stringParam } from "../params.ts";
import { missingParameter } from "../../errors.ts";
import {
  type ApiKeyCheck,
  type CheckRequest,
  type CheckResult,
  initializeAuthentication,
  requireValidateApiKey,
  samlCheck,
  triggerChallenge,
  validateCheck,
} from "../../domain/validate/mod.ts";
import { tokenOf } from "../auth.ts";
import { apiKeyStatus } from "../jwt.ts";
import type { ClientQuestion } from "../../domain/token/types/mod.ts";
import { fidoAnswerOf, passkeyRegistrationOf, signedAnswerOf } from "../fido_answer.ts";
import { pollTransaction } from "../../domain/challenge/mod.ts";
import { hasOfflineBinding, offlineAuthItems } from "../../domain/machine/mod.ts";
import { isTransientDbError } from "../../db/transient_error.ts";
import { auditSerials } from "../../domain/audit/mod.ts";
import { requestSections } from "../rights/rights.ts";

/** `/validate/`: authentication of users and tokens (spec 02 §6–§8). */
export const validateRoutes = new Hono<AppEnv>();

type C = Context<AppEnv>;

/** The request's API key, read and verified only when `api_key_required` asks for it. */
function apiKeyOf(c: C): ApiKeyCheck {
  return () => apiKeyStatus(c.get("deps"), tokenOf(c));
}

function passOf(p: Record<string, unknown>): string {
  const pass = stringParam(p, "pass");
  if (pass === undefined) throw missingParameter("pass");
  return pass;
}

/**
 * The question the client chose for an OCRA challenge (`challenge` and the two that shape
 * it), as sent; the OCRA type checks it. A `challenge` that is no text is no such question.
 */
function clientQuestionParams(p: Record<string, unknown>): ClientQuestion | undefined {
  const text = p.challenge;
  if (typeof text !== "string" && typeof text !== "number") return undefined;
  if (String(text) === "") return undefined;
  return {
    text: String(text),
    addRandom: stringParam(p, "addrandomchallenge"),
    hash: stringParam(p, "hashchallenge"),
  };
}

/** The check request from the parameters (`state` is an alias of `transaction_id`). */
function checkRequestOf(c: C): CheckRequest {
  const p = c.get("params");
  // a registration also carries a credential id: it is no assertion
  const passkeyRegistration = passkeyRegistrationOf(c);
  const fido = passkeyRegistration ? undefined : fidoAnswerOf(c);
  const signedAnswer = fido || passkeyRegistration ? undefined : signedAnswerOf(c);
  const isCancelEnrolment = boolParam(p, "cancel_enrollment");
  return {
    user: stringParam(p, "user"),
    realm: stringParam(p, "realm"),
    resolver: stringParam(p, "resolver"),
    serial: stringParam(p, "serial"),
    // an empty pass is allowed (PIN-only spass, challenge trigger), a missing one is not;
    // an assertion needs none
    pass: fido || passkeyRegistration || signedAnswer || isCancelEnrolment
      ? stringParam(p, "pass") ?? ""
      : passOf(p),
    transactionId: stringParam(p, "transaction_id") || stringParam(p, "state") || undefined,
    otponly: boolParam(p, "otponly"),
    type: stringParam(p, "type") || undefined,
    serviceId: stringParam(p, "service_id") || undefined,
    clientQuestion: clientQuestionParams(p),
    clientIp: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    fido,
    signedAnswer,
    passkeyRegistration,
    isCancelEnrolment,
    apiKey: apiKeyOf(c),
    conditions: requestSections(c),
  };
}

function auditCheck(c: C, r: CheckResult): void {
  const audit = c.get("audit");
  audit.serial = r.serial ?? audit.serial;
  audit.tokenType = r.tokenType ?? audit.tokenType;
  audit.user = r.login ?? r.user?.login ?? audit.user;
  audit.realm = r.realm ?? r.user?.realm ?? audit.realm;
  audit.resolver = r.user?.resolver ?? audit.resolver;
  audit.info = r.auditInfo ?? String(r.detail.message ?? "");
  audit.outcome = r.value;
  // the answer as privacyIDEA audits it; auth_max_fail leaves challenges out
  audit.authentication = authenticationOf(r.value, r.detail);
  if (r.policies) audit.policies = r.policies.join(",").slice(0, 1000);
}

/** Whether the token gets offline values; a database that cannot tell now means no. */
async function hasOffline(c: C, serial: string, tokenType: string | undefined): Promise<boolean> {
  try {
    return await hasOfflineBinding(c.get("deps"), serial, tokenType);
  } catch (err) {
    // the check's writes stand: its result is the answer, without offline values, rather than a
    // 503 that would make the client retry an OTP that is used up
    if (!isTransientDbError(err)) throw err;
    c.get("deps").log.warn("Cannot refresh the offline values; answering the check", {
      serial,
      error: err as Error,
    });
    return false;
  }
}

async function check(c: C): Promise<Response> {
  c.set("authStyle", true);
  const req = checkRequestOf(c);
  const audit = c.get("audit");
  audit.serial = req.serial ?? "";
  audit.user = req.user ?? "";
  let about: string[] = [];
  req.onTokens = (serials) => about = serials;
  // the check's writes commit with the request's audit row (app.ts), before the answer leaves
  req.writes = c.get("writes");
  let result: CheckResult;
  try {
    result = await validateCheck(c.get("deps"), req);
  } catch (err) {
    // a request that fails (e.g. the database went away) is audited with the tokens it was about
    audit.serial ||= auditSerials(about);
    throw err;
  }
  const deps = c.get("deps");
  // spec 07 §5.4: a token with an offline binding gets fresh offline values (machine module),
  // made only once the check's writes are committed: a failed commit answers the error (before
  // the audit row takes the check's outcome)
  const isOffline = result.value && result.serial !== undefined &&
    await hasOffline(c, result.serial, result.tokenType);
  if (isOffline) await c.get("writes").settle();
  auditCheck(c, result);
  let authItems: Awaited<ReturnType<typeof offlineAuthItems>> | undefined;
  if (isOffline && result.serial !== undefined) {
    try {
      authItems = await offlineAuthItems(deps, result.serial, {
        password: req.pass,
        userAgent: req.userAgent,
        tokenType: result.tokenType,
      });
    } catch (err) {
      // the check is committed: its result is the answer, without fresh offline values, rather
      // than a 503 that would make the client retry an OTP that is used up
      if (!isTransientDbError(err)) throw err;
      deps.log.warn("Cannot refresh the offline values; answering the check", {
        serial: result.serial,
        error: err as Error,
      });
    }
  }
  return ok(c, result.value, {
    detail: result.detail,
    extra: authItems && { auth_items: authItems },
  });
}

validateRoutes.get("/check", check);
validateRoutes.post("/check", check);

async function radiusCheck(c: C): Promise<Response> {
  c.set("authStyle", true);
  const result = await validateCheck(c.get("deps"), checkRequestOf(c));
  auditCheck(c, result);
  // success → 204, failed authentication → 400, both with an empty body
  return new Response(null, { status: result.value ? 204 : 400 });
}

validateRoutes.get("/radiuscheck", radiusCheck);
validateRoutes.post("/radiuscheck", radiusCheck);

async function saml(c: C): Promise<Response> {
  c.set("authStyle", true);
  const { value, result } = await samlCheck(c.get("deps"), checkRequestOf(c));
  auditCheck(c, result);
  return ok(c, value, { detail: result.detail });
}

validateRoutes.get("/samlcheck", saml);
validateRoutes.post("/samlcheck", saml);

async function trigger(c: C): Promise<Response> {
  c.set("authStyle", true);
  const p = c.get("params");
  const res = await triggerChallenge(c.get("deps"), {
    user: stringParam(p, "user") || undefined,
    realm: stringParam(p, "realm"),
    resolver: stringParam(p, "resolver"),
    serial: stringParam(p, "serial") || undefined,
    type: stringParam(p, "type") || undefined,
    clientQuestion: clientQuestionParams(p),
    clientIp: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions: requestSections(c),
  });
  const audit = c.get("audit");
  audit.serial = res.serial ?? stringParam(p, "serial") ?? "";
  audit.tokenType = res.tokenType ?? "";
  audit.user = res.user?.login ?? "";
  audit.realm = res.user?.realm ?? "";
  audit.info = `triggered ${res.count} challenges`;
  audit.outcome = res.count > 0;
  audit.authentication = authenticationOf(res.count, res.detail);
  // the detail keys are always present, also when empty (spec 02 §8)
  return ok(c, res.count, { detail: res.detail });
}

validateRoutes.get("/triggerchallenge", trigger);
validateRoutes.post("/triggerchallenge", trigger);

async function poll(c: C): Promise<Response> {
  c.set("authStyle", true);
  const tid = pathParam(c, "transaction_id") || stringParam(c.get("params"), "transaction_id") ||
    "";
  await requireValidateApiKey(c.get("deps"), {
    clientIp: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    apiKey: apiKeyOf(c),
    conditions: requestSections(c),
  });
  const res = await pollTransaction(c.get("deps"), tid);
  c.get("audit").info = `transaction_id: ${tid.slice(0, 64)}`;
  c.get("audit").outcome = res.isAnswered;
  return ok(c, res.isAnswered, { detail: { challenge_status: res.status } });
}

validateRoutes.get("/polltransaction", poll);
validateRoutes.get("/polltransaction/:transaction_id", poll);

/** `GET|POST /validate/initialize?type=passkey`: a challenge for a login without a user name. */
async function initialize(c: C): Promise<Response> {
  c.set("authStyle", true);
  const p = c.get("params");
  const type = stringParam(p, "type");
  if (type === undefined || type === "") throw missingParameter("type");
  const detail = await initializeAuthentication(c.get("deps"), {
    type,
    clientIp: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions: requestSections(c),
  });
  const audit = c.get("audit");
  audit.tokenType = type.slice(0, 30);
  audit.info = `transaction_id: ${detail.transaction_id}`;
  audit.outcome = true;
  return ok(c, false, { detail });
}

validateRoutes.get("/initialize", initialize);
validateRoutes.post("/initialize", initialize);
