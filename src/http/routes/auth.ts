import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { ok } from "../envelope.ts";
import { stringParam } from "../params.ts";
import { fidoAnswerOf } from "../fido_answer.ts";
import { issueJwt } from "../jwt.ts";
import { login, loginAttemptOf, menusOf, piLogLevel } from "../../domain/auth/mod.ts";
import { TOKEN_TYPES } from "../../domain/token/mod.ts";
import { rightsOf, webuiSettings } from "../../domain/policy/mod.ts";
import { callerConditionData, loginSettings } from "../../domain/webui/mod.ts";
import { addAuditPolicies } from "../rights/rights.ts";
import { webuiRequest } from "../webui_request.ts";

// the audit table's user and realm columns hold 255 characters
const AUDIT_FIELD_MAX = 255;

/** `/auth`: login (unauthenticated) and `/auth/rights`. */
export const authRoutes = new Hono<AppEnv>();

authRoutes.post("/", async (c) => {
  c.set("authStyle", true);
  const p = c.get("params");
  const deps = c.get("deps");
  // a credential id makes it a passkey login (spec 11 §5.3 point 4), whatever else was sent
  const answer = fidoAnswerOf(c);
  const username = stringParam(p, "username") ?? "";
  if (!answer && username !== "") {
    // a failed login's audit row names who was tried; a success overwrites it below
    const tried = await loginAttemptOf(deps, username, stringParam(p, "realm"));
    c.get("audit").user = tried.user.slice(0, AUDIT_FIELD_MAX);
    c.get("audit").realm = tried.realm.slice(0, AUDIT_FIELD_MAX);
  }
  const web = webuiRequest(c);
  const result = await login(deps, {
    username,
    password: stringParam(p, "password") ?? "",
    realm: stringParam(p, "realm"),
    clientIp: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    passkey: answer && {
      transactionId: stringParam(p, "transaction_id") || undefined,
      answer,
    },
    remoteUser: c.get("remoteUser"),
    conditions: web.conditions,
  });
  // the rights and the JWT lifetime read the user's info for their conditions
  const conditions = callerConditionData(deps, result, web.conditions);
  const rights = await rightsOf(deps, result, {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions,
  });
  // webui policies: JWT lifetime (jwt_validity) and the web interface's settings (after the
  // login, as privacyIDEA's last post-step: a conflict of two values fails the login)
  const { jwtValidity } = await webuiSettings(deps, result, {
    client: c.get("clientIp"),
    userAgent: c.get("userAgent"),
    conditions,
  });
  const settings = await loginSettings(deps, result, web);
  addAuditPolicies(c, settings.policies);
  const { token } = await issueJwt(deps, { ...result, rights }, jwtValidity);
  const audit = c.get("audit");
  audit.user = result.username;
  audit.realm = result.realm;
  audit.resolver = result.resolver;
  if (result.serial) audit.serial = result.serial;
  if (result.role === "admin") audit.administrator = result.username;
  audit.outcome = true;
  return ok(c, {
    token,
    role: result.role,
    username: result.username,
    realm: result.realm,
    rights,
    menus: menusOf(result.role),
    log_level: piLogLevel(deps.config.log.level),
    auth: true,
    ...settings.values,
  });
});

authRoutes.get("/rights", async (c) => {
  // enrollable types: those with enroll<TYPE> among the caller's rights (spec 01 §6.4)
  const identity = c.get("identity")!;
  const rights = new Set(
    await rightsOf(c.get("deps"), identity, {
      client: c.get("clientIp"),
      userAgent: c.get("userAgent"),
      conditions: callerConditionData(
        c.get("deps"),
        { ...identity, resolver: identity.resolver ?? "" },
        webuiRequest(c).conditions,
      ),
    }),
  );
  return ok(
    c,
    Object.fromEntries(
      Object.entries(TOKEN_TYPES).filter(([type]) => rights.has(`enroll${type.toUpperCase()}`)),
    ),
  );
});
