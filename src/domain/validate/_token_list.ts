/**
 * The token-list decision (spec 02 §6.2): usable tokens, each classified
 * (PIN, PIN+OTP, a challenge answer, a remote PIN), the first non-empty group
 * decides; with auto-resync and the wrap of PIN change, resync and
 * `reset_all_user_tokens`.
 *
 * @module
 */
import { TokenAdminError } from "../../errors.ts";
import {
  checkContext,
  checkImportedPin,
  checkPin,
  isImportedPinHash,
  plainInfo,
  splitPinPass,
  TOKEN_LOCKED_MESSAGE,
  tokenTypeOf,
  type TokenWithInfo,
} from "../token/mod.ts";
import { challengesOfTransaction } from "../challenge/mod.ts";
import { checkUserPassword } from "../token/_users.ts";
import type { OtpCheck, TokenType, TypeCheckContext } from "../token/types/mod.ts";
import {
  activeAssignedInRealm,
  advanceCounter,
  recordAuth,
  setInfoOnCheck,
} from "../token/token_store.ts";
import type { RadiusTokenExtras } from "../token/types/radius.ts";
import { answerAddressChallenge, isAddressChallenge } from "./_enrol_token.ts";
import { type CheckContext, type CheckResult, typePolicy } from "./_context.ts";
import {
  applyOtpCheck,
  maybeClearFailcounter,
  raiseFailcounters,
  resetAllTokens,
  settleSuccess,
} from "./_check_writes.ts";
import { lastAuthProblem, pinChangeInfo, stateProblems } from "./_token_state.ts";
import type { Groups } from "./_groups.ts";
import {
  answerPinChange,
  askForNewPin,
  GENERIC_RESYNC,
  resyncChallenge,
} from "./_generic_challenges.ts";
import { answerTransaction } from "./_answers.ts";
import { parseData, triggerChallenges } from "./_challenges.ts";
import { waitForAnswer } from "./_wait.ts";

/** PIN check under the `otppin` policy. */
async function pinMatches(ctx: CheckContext, t: TokenWithInfo, pin: string): Promise<boolean> {
  switch (ctx.policies.otppin) {
    case "none":
      return pin === "";
    case "userstore": {
      const owner = t.owner ?? ctx.user;
      return owner ? await checkUserPassword(ctx.deps, owner, pin) : false;
    }
    default:
      // a PIN imported from privacyIDEA is checked once with its own scheme, then re-hashed
      return checkPin(ctx.deps, t.pinHash, pin) ||
        (isImportedPinHash(t.pinHash) && await checkImportedPin(ctx.deps, t, pin));
  }
}

function typeOrder(type: string): number {
  return type === "push" ? 1 : 0;
}

/**
 * Spec 02 §6.2: checks `pass` against a list of tokens, wrapped as in
 * privacyIDEA by `reset_all_user_tokens`.
 */
export async function checkTokenList(
  ctx: CheckContext,
  all: TokenWithInfo[],
): Promise<CheckResult> {
  // privacyIDEA's order: reset_all_user_tokens(PIN change(resync(the check)))
  let result = ctx.request.transactionId ? await answerPinChange(ctx, all) : undefined;
  if (!result) {
    result = await checkTokens(ctx, all);
    if (!result.value && ctx.policies.resyncViaMultichallenge) {
      result = await resyncChallenge(ctx, all, result);
    }
    if (result.value && result.detail.pin_change === true && ctx.policies.changePinViaValidate) {
      result = await askForNewPin(ctx, all, result);
    }
  }
  if (result.value && ctx.policies.resetAllUserTokens) await resetAllTokens(ctx, all);
  return result;
}

/** The token-list check itself (spec 02 §6.2 steps 1–4). */
async function checkTokens(ctx: CheckContext, all: TokenWithInfo[]): Promise<CheckResult> {
  const tokens = usableTokens(ctx, all);
  const transactionId = ctx.request.transactionId;
  const groups: Groups = {
    // expired challenges still classify the request as a response (expiry is checked later)
    tx: transactionId
      ? {
        id: transactionId,
        stored: await challengesOfTransaction(ctx.deps, transactionId, tokens.map((t) => t.serial)),
      }
      : undefined,
    stateMessages: new Set(),
    valid: [],
    responded: [],
    rightAnswers: [],
    challengeRequests: [],
    challengeOverrides: {},
    reChallenged: [],
    pinMatching: [],
    invalid: [],
    isPreviousOtp: false,
  };
  for (const t of tokens) await classifyToken(ctx, groups, t);
  return await decide(ctx, groups);
}

/**
 * Step 1 and 2: without revoked tokens (none left: locked), disabled types and
 * tokens their type leaves out of this request (an applspec token without its
 * `service_id`), push last.
 */
function usableTokens(ctx: CheckContext, all: TokenWithInfo[]): TokenWithInfo[] {
  const tokens = all.filter((t) => !t.revoked);
  if (tokens.length === 0) throw new TokenAdminError(TOKEN_LOCKED_MESSAGE, 1007);
  return tokens.filter((t) =>
    !ctx.policies.disabledTokenTypes.includes(t.type) &&
    tokenTypeOf(t.type)?.isCandidate?.(t, ctx.request) !== false
  ).sort((a, b) =>
    typeOrder(a.type) - typeOrder(b.type) || a.type.charAt(0).localeCompare(b.type.charAt(0))
  );
}

/** Step 3: puts one token into its group. */
async function classifyToken(ctx: CheckContext, groups: Groups, t: TokenWithInfo): Promise<void> {
  await maybeClearFailcounter(ctx, t);
  const problems = stateProblems(ctx, t);
  if (problems.length > 0) {
    problems.forEach((p) => groups.stateMessages.add(p));
    return;
  }
  const module = tokenTypeOf(t.type);
  if (!module) groups.invalid.push(t);
  else if (groups.tx) await classifyAnswer(ctx, groups, t, module);
  else if (module.checksOtherTokens) await classifyOtherTokens(ctx, groups, t, module);
  else if (isRemotePin(module, t)) await classifyRemote(ctx, groups, t, module);
  else await classifyPinOtp(ctx, groups, t, module);
}

/**
 * A type that authenticates through other users' tokens (4eyes): the whole pass
 * goes to the type, which asks {@link checkRealmPass} about each part; a failure
 * counts as a right PIN with a wrong OTP (privacyIDEA's pin_match). The token's
 * own PIN alone asks for a challenge (the collection, one part per request).
 */
async function classifyOtherTokens(
  ctx: CheckContext,
  groups: Groups,
  t: TokenWithInfo,
  module: TokenType,
): Promise<void> {
  if (module.challenge && await pinMatches(ctx, t, ctx.request.pass)) {
    // its own PIN starts the collection of one PIN+OTP per request
    groups.challengeRequests.push(t);
    return;
  }
  const res = await module.checkOtp(otherTokensContext(ctx, t), ctx.request.pass);
  if (res.isValid && await applyOtpCheck(ctx, t, res)) groups.valid.push(t);
  else groups.pinMatching.push(t);
}

/** The check context of a type that checks other tokens: with {@link checkRealmPass}. */
function otherTokensContext(ctx: CheckContext, t: TokenWithInfo): TypeCheckContext {
  return {
    ...checkContext(ctx.deps, ctx.system, t),
    checkRealmPass: (realm, pass) => checkRealmPass(ctx, realm, pass, t.type),
  };
}

/**
 * privacyIDEA's `check_realm_pass`: `pass` checked against the active, assigned
 * tokens of `realm` (not of type `exclude`) as a token-list check of them, with
 * its writes (counters, fail counters), without `reset_all_user_tokens`; the
 * serial of the one token it authenticates.
 */
async function checkRealmPass(
  ctx: CheckContext,
  realm: string,
  pass: string,
  exclude: string,
): Promise<string | undefined> {
  const tokens = (await activeAssignedInRealm(ctx.deps.db, realm))
    .filter((x) => x.type !== exclude && !x.revoked);
  if (tokens.length === 0) return undefined;
  const sub: CheckContext = {
    ...ctx,
    request: { ...ctx.request, pass, transactionId: undefined },
    user: undefined,
    token: undefined,
  };
  const res = await checkTokens(sub, tokens);
  return res.value && res.tokens?.length === 1 ? res.tokens[0].serial : undefined;
}

/** A radius token whose PIN the upstream server checks (the whole pass goes there). */
function isRemotePin(module: TokenType, t: TokenWithInfo): boolean {
  const remote = module as Partial<RadiusTokenExtras>;
  return remote.authenticate !== undefined && remote.pinCheckedRemotely?.(t) === true;
}

/**
 * Second step of challenge-response: `pass` is the OTP only. A right answer
 * is only a candidate; the transaction's consumption decides (see {@link decide}).
 */
async function classifyAnswer(
  ctx: CheckContext,
  groups: Groups,
  t: TokenWithInfo,
  module: TokenType,
): Promise<void> {
  const tx = groups.tx!;
  const pass = ctx.request.pass;
  if (!tx.stored.some((c) => c.serial === t.serial)) {
    groups.invalid.push(t);
    return;
  }
  groups.responded.push(t);
  const challenge = tx.stored.find((c) => c.serial === t.serial && c.expiresAt >= ctx.now);
  if (!challenge) return;
  const typeCtx = module.checksOtherTokens
    ? otherTokensContext(ctx, t)
    : checkContext(ctx.deps, ctx.system, t);
  let check: OtpCheck;
  if (isAddressChallenge(parseData(challenge.data))) {
    // the first answer of an email or SMS enrolment via multichallenge is the new address
    check = await answerAddressChallenge(ctx.deps, t, pass, {
      user: ctx.user ?? t.owner,
      clientIp: ctx.request.clientIp,
    });
  } else if (isRemotePin(module, t)) {
    // the upstream server checks the answer; its State travels in the challenge data
    const out = await (module as TokenType & RadiusTokenExtras).authenticate(typeCtx, pass, {
      challengeData: parseData(challenge.data),
      challengeAllowed: true,
    });
    if (out.result === "challenge") {
      groups.reChallenged.push(t);
      groups.challengeOverrides[t.serial] = {
        message: out.message,
        data: JSON.stringify(out.data),
      };
    }
    check = { isValid: out.result === "accept" };
  } else if (module.checkAnswer) {
    // the type's own challenge (positions, question, sent code) is in its data
    check = await module.checkAnswer(
      {
        ...typeCtx,
        challenge: challenge.challenge,
        // a U2F key answers with signed data besides the (empty) pass
        signedAnswer: ctx.request.signedAnswer,
        authzValues: (action) => ctx.policies.typeAuthz[action] ?? [],
      },
      pass,
      parseData(challenge.data) ?? {},
    );
  } else check = await module.checkOtp(typeCtx, pass);
  if (!check.isValid && challenge.challenge === GENERIC_RESYNC) {
    // the answer to a resync challenge is the OTP after the remembered one
    check = { isValid: await autoResync(ctx, t, typeCtx, pass) };
  }
  if (check.isValid) groups.rightAnswers.push({ token: t, check });
}

/** Remote PIN: the whole pass goes upstream, no local PIN check. */
async function classifyRemote(
  ctx: CheckContext,
  groups: Groups,
  t: TokenWithInfo,
  module: TokenType,
): Promise<void> {
  const out = await (module as TokenType & RadiusTokenExtras).authenticate(
    checkContext(ctx.deps, ctx.system, t),
    ctx.request.pass,
    { challengeAllowed: ctx.policies.challengeResponse.includes(t.type) },
  );
  if (out.result === "accept") groups.valid.push(t);
  else if (out.result === "challenge") {
    groups.challengeRequests.push(t);
    groups.challengeOverrides[t.serial] = { message: out.message, data: JSON.stringify(out.data) };
  } else groups.invalid.push(t);
}

/** PIN (alone: a challenge request) or PIN+OTP checked here. */
async function classifyPinOtp(
  ctx: CheckContext,
  groups: Groups,
  t: TokenWithInfo,
  module: TokenType,
): Promise<void> {
  const pass = ctx.request.pass;
  if (module.mayTrigger && !module.mayTrigger(typePolicy(ctx.policies))) {
    // answered only through the FIDO branch (a passkey without passkey_trigger_by_pin)
    return;
  }
  const canChallenge = module.challenge &&
    (module.challengeOnly || ctx.policies.challengeResponse.includes(t.type));
  if (canChallenge && await pinMatches(ctx, t, pass)) {
    // a WebUI login never waits (privacyIDEA's /auth sets push_wait to false)
    const wait = ctx.request.isWebuiLogin
      ? undefined
      : module.waitSeconds?.(typePolicy(ctx.policies));
    if (wait === undefined) groups.challengeRequests.push(t);
    // single-shot (push_wait): only when no token before it succeeded; a PIN match without the
    // answer in time is a right PIN with a wrong OTP, as in privacyIDEA
    else if (groups.valid.length === 0 && await waitForAnswer(ctx, t, wait)) {
      groups.valid.push(t);
    } else groups.pinMatching.push(t);
    return;
  }
  const split = module.pinOnly
    ? { pin: pass, otp: "" }
    : splitPinPass(pass, t.otplen, ctx.system.bool("PrependPin"));
  if (!split || !(await pinMatches(ctx, t, split.pin))) {
    groups.invalid.push(t);
    return;
  }
  if (ctx.policies.forceChallengeResponse && module.challenge && !module.pinOnly) {
    groups.invalid.push(t);
    return;
  }
  const typeCtx = checkContext(ctx.deps, ctx.system, t);
  const res = await module.checkOtp(typeCtx, split.otp);
  if (res.isValid && await applyOtpCheck(ctx, t, res)) groups.valid.push(t);
  else if (!res.isValid && await autoResync(ctx, t, typeCtx, split.otp)) groups.valid.push(t);
  else {
    if (await module.isPreviousOtp?.(typeCtx, split.otp)) groups.isPreviousOtp = true;
    groups.pinMatching.push(t);
  }
}

/** Step 4: the first non-empty group decides the outcome. */
async function decide(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  if (groups.valid.length > 0) {
    const tooOld = lastAuthProblem(ctx, groups.valid);
    if (tooOld) return tooOld;
    const used = await settleSuccess(ctx, groups.valid, {
      countAuth: !ctx.system.bool("no_auth_counter"),
    });
    if (used.length > 0) return acceptValid(used, ctx.now);
    // one-time tokens a parallel request used up first: as if the pass were wrong
    groups.invalid.push(...groups.valid);
  }
  if (groups.responded.length > 0) return await answerTransaction(ctx, groups);
  if (groups.challengeRequests.length > 0) {
    return await triggerChallenges(ctx, groups.challengeRequests, {
      increaseFailcount: ctx.policies.increaseFailcounterOnChallenge,
      overrides: groups.challengeOverrides,
    });
  }
  if (groups.pinMatching.length > 0) return await rejectPinMatch(ctx, groups);
  if (groups.invalid.length > 0) return await rejectInvalid(ctx, groups.invalid);
  if (groups.stateMessages.size > 0) {
    return { value: false, detail: { message: [...groups.stateMessages].join(", ") } };
  }
  return { value: false, detail: { message: "No suitable token found for authentication." } };
}

/** The `valid` outcome: `matching N tokens`. */
function acceptValid(valid: TokenWithInfo[], now: number): CheckResult {
  const detail: Record<string, unknown> = { message: `matching ${valid.length} tokens` };
  const result: CheckResult = { value: true, detail, tokens: valid };
  if (valid.length === 1) {
    const t = valid[0];
    Object.assign(detail, { serial: t.serial, type: t.type, otplen: t.otplen });
    Object.assign(detail, pinChangeInfo(t, now));
    result.serial = t.serial;
    result.tokenType = t.type;
  } else if (new Set(valid.map((t) => t.type)).size > 1) {
    detail.type = "undetermined";
  } else {
    detail.type = valid[0].type;
  }
  return result;
}

/** The `pin-match` outcome: right PIN, wrong OTP. */
async function rejectPinMatch(ctx: CheckContext, groups: Groups): Promise<CheckResult> {
  const tokens = groups.pinMatching;
  await raiseFailcounters(ctx, tokens);
  await recordAuth(ctx.deps.db, tokens.map((t) => t.id), {
    isSuccess: false,
    countAuth: !ctx.system.bool("no_auth_counter"),
  }, ctx.pending);
  const result: CheckResult = { value: false, detail: { message: "wrong otp value" } };
  if (tokens.length === 1) {
    const t = tokens[0];
    const message = groups.isPreviousOtp
      ? "wrong otp value. previous otp used again"
      : "wrong otp value";
    Object.assign(result.detail, { message, serial: t.serial, type: t.type, otplen: t.otplen });
    result.serial = t.serial;
    result.tokenType = t.type;
  }
  return result;
}

/** The `invalid` outcome: wrong PIN (or no such challenge). */
async function rejectInvalid(ctx: CheckContext, invalid: TokenWithInfo[]): Promise<CheckResult> {
  if (ctx.system.bool("IncFailCountOnFalsePin")) {
    await raiseFailcounters(ctx, invalid);
  }
  const result: CheckResult = { value: false, detail: { message: "wrong otp pin" } };
  if (invalid.length === 1) {
    result.serial = invalid[0].serial;
    result.tokenType = invalid[0].type;
  }
  return result;
}

/**
 * Auto-resync (system config `AutoResync`, spec 02 §4): an OTP found in the
 * sync window is remembered (`otp1c`, `dueDate`); the directly following OTP
 * before the due date resyncs the token and authenticates.
 */
async function autoResync(
  ctx: CheckContext,
  t: TokenWithInfo,
  typeCtx: TypeCheckContext,
  otp: string,
): Promise<boolean> {
  const module = tokenTypeOf(t.type);
  if (!module?.findInSyncWindow || !ctx.system.bool("AutoResync")) return false;
  const counter = await module.findInSyncWindow(typeCtx, otp);
  if (counter < 0) return false;
  const first = Number(t.info.otp1c?.value ?? "NaN");
  const due = Number(t.info.dueDate?.value ?? "0");
  if (first + 1 === counter && ctx.now <= due * 1000) {
    if (!(await advanceCounter(ctx.deps.db, t.id, counter + 1, ctx.pending))) return false;
    await setInfoOnCheck(ctx.deps.db, t.id, plainInfo({ otp1c: "", dueDate: "" }), ctx.pending);
    t.info = { ...t.info, otp1c: { value: "", type: "" } };
    return true;
  }
  const timeout = ctx.system.int("AutoResyncTimeout");
  const remembered = {
    otp1c: String(counter),
    dueDate: String(Math.floor(ctx.now / 1000) + timeout),
  };
  await setInfoOnCheck(ctx.deps.db, t.id, plainInfo(remembered), ctx.pending);
  // what this request remembered is what resync_via_multichallenge reads
  t.info = { ...t.info, otp1c: { value: remembered.otp1c, type: "" } };
  return false;
}
