import { type Context, Hono } from "hono";
import type { AppEnv, RequestTarget } from "../context.ts";
import { ok } from "../envelope.ts";
import { boolParam, intParam, pathParam, requireString, stringParam } from "../params.ts";
import {
  mayActOnContainer,
  requestConditionData,
  requestRightValue,
  requestRightValues,
  rightContextOf,
  visibleRealms,
} from "../rights/rights.ts";
import { AppError, missingParameter, ResourceNotFoundError, UserError } from "../../errors.ts";
import {
  addNewTokenToContainer,
  checkContainerTokenType,
  findContainer,
} from "../../domain/container/mod.ts";
import {
  assignToken,
  deleteTokenInfo,
  deleteTokens,
  disableTokens,
  enableTokens,
  forEachToken,
  getSerialByOtp,
  initToken,
  isOwner,
  listTokens,
  lostToken,
  parseTokenState,
  type PinPolicyScope,
  type PinSetBy,
  resetTokens,
  resyncToken,
  revokeTokens,
  setDescription,
  setPin,
  setRandomPin,
  setTokenFields,
  setTokenInfo,
  setTokenRealms,
  TOKEN_NOT_FOUND_MESSAGE,
  type TokenListQuery,
  tokensCsv,
  type TokenWithInfo,
  unassignTokens,
  USER_NOT_FOUND_MESSAGE,
} from "../../domain/token/mod.ts";
import { deleteExpiredChallenges, listChallenges } from "../../domain/challenge/mod.ts";
import { addTokenLoadRoutes } from "./token_load.ts";
import { addTokenGroupRoutes } from "./tokengroup.ts";
import { addTokenCopyRoutes } from "./token_copy.ts";

/** `/token/`: enrolment and administration of tokens (spec 02 §5). */
export const tokenRoutes = new Hono<AppEnv>();

type C = Context<AppEnv>;

/** The request's checked objects (see `guard.ts`). */
function targetOf(c: C): RequestTarget {
  return c.get("target");
}

/**
 * The checked tokens the request acts on: the token of its serial (which must be the named
 * user's, when a user is named too), else every token of its user. The only way a handler
 * reaches a token: what the rights step loaded and decided on.
 */
function checkedTokens(c: C): TokenWithInfo[] {
  const t = targetOf(c);
  if (t.serial === undefined && !t.user) throw missingParameter("serial");
  c.get("audit").serial = t.serial ?? "";
  if (t.serial === undefined) return t.userTokens ?? [];
  const user = t.user;
  const tokens = user ? t.tokens.filter((x) => isOwner(x, user)) : t.tokens;
  if (tokens.length === 0) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  return tokens;
}

/** The one checked token of a request naming a serial in its path. */
function pathToken(c: C): TokenWithInfo {
  const t = targetOf(c);
  c.get("audit").serial = t.serial!;
  if (t.tokens.length === 0) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  return t.tokens[0];
}

function isUserCaller(c: C): boolean {
  return c.get("identity")?.role === "user";
}

/**
 * The caller and policy context of the request's PIN policies (`enrollpin`, `otp_pin_*`): for
 * an admin the user the request names, else its token, else the realm a new token goes to.
 */
function pinPolicyOf(c: C): PinPolicyScope | undefined {
  const identity = c.get("identity");
  if (!identity) return undefined;
  const target = targetOf(c);
  const base = rightContextOf(c);
  const u = target.user;
  const context = u
    ? { ...base, user: u.login, realm: u.realm, resolver: u.resolver }
    : target.placeRealm !== undefined && target.tokens.length === 0
    ? { ...base, realm: target.placeRealm }
    : base;
  const { role, username, realm, resolver } = identity;
  return { caller: { role, username, realm, resolver }, context };
}

/** Who sets a PIN in this request (the enrollment policies change_pin_*). */
function pinSetBy(c: C): PinSetBy | undefined {
  const role = c.get("identity")?.role;
  return role
    ? { role, client: c.get("clientIp"), conditions: requestConditionData(c, c.get("target")) }
    : undefined;
}

tokenRoutes.post("/init", async (c) => {
  const p = c.get("params");
  const identity = c.get("identity");
  const target = targetOf(c);
  const deps = c.get("deps");
  // container_serial: the new token goes into that container (spec 13 §2.14); a type the
  // container cannot hold is refused before anything is created (privacyIDEA creates the token
  // first and then fails)
  const containerSerial = stringParam(p, "container_serial");
  const container = containerSerial ? await findContainer(deps, containerSerial) : undefined;
  if (container) {
    checkContainerTokenType(container, (stringParam(p, "type") || "hotp").toLowerCase());
  }
  const res = await initToken(deps, p, {
    user: target.user,
    realm: target.user ? undefined : target.placeRealm,
    caller: identity
      ? { role: identity.role, username: identity.username, realm: identity.realm }
      : undefined,
    // a WebAuthn registration is bound to the origin the browser saw (spec 11 §4.3)
    origin: c.req.header("Origin"),
    client: c.get("clientIp"),
    pinPolicy: pinPolicyOf(c),
    conditions: requestConditionData(c, target),
  });
  const audit = c.get("audit");
  audit.serial = res.serial;
  audit.tokenType = res.type;
  // without container_add_token on the container the token is created but not put in (as
  // privacyIDEA); an unknown container is ignored
  if (container && await mayActOnContainer(c, container, "container_add_token")) {
    await addNewTokenToContainer(deps, container, res.serial);
    res.detail.container_serial = container.serial;
  }
  return ok(c, true, { detail: res.detail });
});

tokenRoutes.get("/", async (c) => {
  const p = c.get("params");
  const csv = (name: string) => stringParam(p, name)?.split(",").map((s) => s.trim());
  const serial = stringParam(p, "serial");
  const triState = (name: string) => {
    const v = stringParam(p, name);
    return v === undefined || v === "" ? undefined : boolParam(p, name);
  };
  const q: TokenListQuery = {
    type: stringParam(p, "type") || undefined,
    typeList: csv("type_list"),
    description: stringParam(p, "description") || undefined,
    resolver: stringParam(p, "resolver") || undefined,
    userid: stringParam(p, "userid") || undefined,
    rolloutState: stringParam(p, "rollout_state") || undefined,
    assigned: triState("assigned"),
    active: triState("active"),
    state: parseTokenState(stringParam(p, "state")),
    infoKey: stringParam(p, "infokey") || undefined,
    infoValue: stringParam(p, "infovalue") || undefined,
    sortby: stringParam(p, "sortby"),
    sortdir: stringParam(p, "sortdir"),
    page: intParam(p, "page", 1, 1, 1_000_000),
    pagesize: intParam(p, "pagesize", 15, 1, 10_000),
    hiddenInfo: csv("hidden_tokeninfo"),
    tokengroup: stringParam(p, "tokengroup") || undefined,
  };
  if (serial) {
    if (serial.includes(",")) q.serials = serial.split(",").map((s) => s.trim());
    else q.serial = serial;
  }
  const tokenrealm = stringParam(p, "tokenrealm");
  if (tokenrealm) {
    if (tokenrealm.includes(",")) q.tokenrealms = tokenrealm.split(",").map((s) => s.trim());
    else q.tokenrealm = tokenrealm;
  }
  // the user and realm the rights step resolved and checked
  const target = targetOf(c);
  const owner = target.user;
  // a named user who does not exist lists nothing rather than everything
  if (!owner && target.names.user !== undefined) throw new UserError(USER_NOT_FOUND_MESSAGE);
  if (owner) q.owner = owner;
  else if (target.filterRealm !== undefined) q.userRealm = target.filterRealm;
  const containerSerial = stringParam(p, "container_serial");
  if (containerSerial === "") q.containerId = null;
  else if (containerSerial !== undefined) {
    const container = await findContainer(c.get("deps"), containerSerial);
    if (!container) {
      throw new AppError(`No container with the serial ${containerSerial} exists.`, 10);
    }
    q.containerId = container.id;
  }
  // admins with realm-limited tokenlist policies see only the tokens of those realms (also as CSV)
  const visible = await visibleRealms(c, "tokenlist", {
    realm: q.tokenrealm,
    realms: q.tokenrealms,
  });
  if (visible) q.allowedRealms = visible;
  if (stringParam(p, "outform") === "csv") {
    const all = await listTokens(c.get("deps"), { ...q, page: 1, pagesize: 100_000 });
    return new Response(tokensCsv(all.tokens), {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": 'attachment; filename="tokens.csv"',
        "cache-control": "no-store",
      },
    });
  }
  // hide_tokeninfo policies hide these info keys from the caller
  const hidden = await requestRightValues(c, "hide_tokeninfo");
  if (hidden.length > 0) q.hiddenInfo = [...(q.hiddenInfo ?? []), ...hidden];
  return ok(c, await listTokens(c.get("deps"), q));
});

tokenRoutes.post("/assign", async (c) => {
  const p = c.get("params");
  const target = targetOf(c);
  const { serial, user } = target;
  if (!serial) throw missingParameter("serial");
  c.get("audit").serial = serial;
  if (!user) throw missingParameter("user");
  const token = target.tokens[0];
  if (!token) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  return ok(
    c,
    await assignToken(c.get("deps"), token, user, {
      pin: stringParam(p, "pin"),
      isUserCaller: isUserCaller(c),
      client: c.get("clientIp"),
      pinPolicy: pinPolicyOf(c),
      conditions: requestConditionData(c, target),
    }),
  );
});

async function bulkOrSingle(
  c: C,
  action: (tokens: TokenWithInfo[]) => Promise<number>,
): Promise<Response> {
  const target = targetOf(c);
  if (target.serials) {
    c.get("audit").serial = [...target.serials, ...target.denied].join(",").slice(0, 40);
    // serials the rights step refused (other realm, other user) are reported, never touched
    const result = await forEachToken(c.get("deps"), target.serials, target.tokens, action);
    result.unauthorized.push(...target.denied);
    return ok(c, result);
  }
  return ok(c, await action(checkedTokens(c)));
}

tokenRoutes.post("/unassign", async (c) => {
  return await bulkOrSingle(c, (tokens) => unassignTokens(c.get("deps"), tokens));
});

for (const path of ["/enable", "/enable/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    return ok(c, await enableTokens(c.get("deps"), checkedTokens(c)));
  });
}

for (const path of ["/disable", "/disable/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    return ok(c, await disableTokens(c.get("deps"), checkedTokens(c)));
  });
}

for (const path of ["/revoke", "/revoke/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    return ok(c, await revokeTokens(c.get("deps"), checkedTokens(c)));
  });
}

for (const path of ["/reset", "/reset/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    return ok(c, await resetTokens(c.get("deps"), checkedTokens(c)));
  });
}

for (const path of ["/resync", "/resync/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    const p = c.get("params");
    const otp1 = requireString(p, "otp1");
    const otp2 = requireString(p, "otp2");
    return ok(c, await resyncToken(c.get("deps"), checkedTokens(c), otp1, otp2));
  });
}

for (const path of ["/setpin", "/setpin/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    const p = c.get("params");
    const pin = stringParam(p, "otppin") ?? stringParam(p, "userpin") ??
      stringParam(p, "sopin");
    if (pin === undefined) throw missingParameter("otppin");
    return ok(
      c,
      await setPin(c.get("deps"), checkedTokens(c), pin, {
        pinPolicy: pinPolicyOf(c),
        pinChange: pinSetBy(c),
      }),
    );
  });
}

for (const path of ["/setrandompin", "/setrandompin/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    const res = await setRandomPin(c.get("deps"), checkedTokens(c), {
      length: await requestRightValue(c, "otp_pin_set_random"),
      pinChange: pinSetBy(c),
      pinPolicy: pinPolicyOf(c),
    });
    return ok(c, res.count, { detail: { pin: res.pin } });
  });
}

for (const path of ["/description", "/description/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    const description = stringParam(c.get("params"), "description");
    if (description === undefined) throw missingParameter("description");
    const count = await setDescription(c.get("deps"), checkedTokens(c), description, {
      editor: pinPolicyOf(c),
    });
    return ok(c, count >= 0);
  });
}

for (const path of ["/set", "/set/:serial"]) {
  tokenRoutes.post(path, async (c) => {
    const p = c.get("params");
    const int = (name: string) => intParam(p, name, undefined, 0, 1_000_000_000);
    return ok(
      c,
      await setTokenFields(c.get("deps"), checkedTokens(c), {
        description: stringParam(p, "description"),
        countWindow: int("count_window"),
        syncWindow: int("sync_window"),
        hashlib: stringParam(p, "hashlib") || undefined,
        maxFailcount: int("max_failcount"),
        countAuthMax: int("count_auth_max"),
        countAuthSuccessMax: int("count_auth_success_max"),
        validityPeriodStart: stringParam(p, "validity_period_start") || undefined,
        validityPeriodEnd: stringParam(p, "validity_period_end") || undefined,
      }),
    );
  });
}

tokenRoutes.post("/realm/:serial", async (c) => {
  const token = pathToken(c);
  const raw = c.get("params").realms;
  let realms: string[];
  if (Array.isArray(raw)) realms = raw.map((r) => String(r));
  else realms = (stringParam(c.get("params"), "realms") ?? "").split(",");
  return ok(c, await setTokenRealms(c.get("deps"), token, realms));
});

tokenRoutes.post("/info/:serial/:key", async (c) => {
  c.get("audit").serial = targetOf(c).serial!;
  const value = stringParam(c.get("params"), "value");
  if (value === undefined) throw missingParameter("value");
  return ok(c, await setTokenInfo(c.get("deps"), pathToken(c), pathParam(c, "key"), value));
});

tokenRoutes.delete("/info/:serial/:key", async (c) => {
  return ok(c, await deleteTokenInfo(c.get("deps"), pathToken(c), pathParam(c, "key")));
});

// privacyIDEA's clean-up (spec 14 §18): value {status, deleted}
tokenRoutes.delete("/challenges/expired", async (c) => {
  const deleted = await deleteExpiredChallenges(c.get("deps"));
  c.get("audit").info = `Deleted ${deleted} expired challenges`;
  return ok(c, { status: true, deleted });
});

for (const path of ["/challenges", "/challenges/", "/challenges/:serial"]) {
  tokenRoutes.get(path, async (c) => {
    const p = c.get("params");
    // /challenges/<serial> checked the token's realms; the list shows only the admin's realms
    const serial = targetOf(c).serial ?? (stringParam(p, "serial") || undefined);
    return ok(
      c,
      await listChallenges(c.get("deps"), serial, {
        page: intParam(p, "page", 1, 1, 1_000_000),
        pagesize: intParam(p, "pagesize", 15, 1, 10_000),
        realms: await visibleRealms(c, "getchallenges"),
      }),
    );
  });
}

for (const path of ["/", "/:serial"]) {
  tokenRoutes.delete(path, async (c) => {
    return await bulkOrSingle(c, (tokens) => deleteTokens(c.get("deps"), tokens));
  });
}

tokenRoutes.post("/lost/:serial", async (c) => {
  const target = targetOf(c);
  const token = pathToken(c);
  const user = isUserCaller(c) ? target.user : undefined;
  return ok(
    c,
    await lostToken(c.get("deps"), token, {
      user,
      client: c.get("clientIp"),
      conditions: requestConditionData(c, target),
    }),
  );
});

tokenRoutes.get("/getserial/:otp", async (c) => {
  const p = c.get("params");
  return ok(
    c,
    await getSerialByOtp(c.get("deps"), pathParam(c, "otp"), {
      // a realm-limited admin searches only the tokens of their realms
      realms: await visibleRealms(c, "getserial"),
      type: stringParam(p, "type") || undefined,
      serial: stringParam(p, "serial") || undefined,
      assigned: boolParam(p, "assigned"),
      unassigned: boolParam(p, "unassigned"),
      countOnly: boolParam(p, "count"),
      window: intParam(p, "window", 10, 1, 1000),
    }),
  );
});

addTokenLoadRoutes(tokenRoutes);
addTokenGroupRoutes(tokenRoutes);
addTokenCopyRoutes(tokenRoutes);
