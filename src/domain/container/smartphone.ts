/**
 * Registration and synchronisation of a smartphone container with the
 * privacyIDEA Authenticator app (spec 13 §2.6–§2.11): the QR code that starts
 * a registration, the app's signed finalize, challenges, the synchronisation
 * that sends the app its tokens' enrolment URLs encrypted to a key it made for
 * that one request, rollover to a new device, and unregistering.
 *
 * The app has no login: its ECDSA signature over a server nonce is the
 * authentication. Each challenge is used at most once (consumed with one
 * conditional delete, so of parallel requests with one signature only one
 * succeeds), expires, and names the endpoint it is for; every refusal is
 * decided before anything is written.
 *
 * Stricter than privacyIDEA: `initially_add_tokens_to_container` takes only
 * tokens of the container's owner into the container (privacyIDEA takes any
 * serial the app names); token entries the app names by OTP values instead of
 * a serial are ignored; malformed keys, signatures and JSON are answered with
 * the documented errors instead of a 500.
 *
 * @module
 */
import type { KeyObject } from "node:crypto";
import type { Deps } from "../../deps.ts";
import { AppError, NotImplementedError, ParameterError, PolicyError } from "../../errors.ts";
import {
  containerMessage,
  decodeBase64Any,
  endpointUrl,
  GCM_IV_BYTES,
  parseEcPublicKeyPem,
  pyIsoUtc,
  registrationUrl,
  sealForApp,
  verifyEcdsaDer,
  X25519_KEY_BYTES,
  x25519Shared,
} from "../../lib/container_crypto.ts";
import { decryptSecretText, encryptSecret } from "../../lib/crypto.ts";
import { pythonJson } from "../../lib/py_json.ts";
import { qrSvgDataUri } from "../../lib/qr.ts";
import { toHex } from "../../lib/random.ts";
import {
  challengesOfSerial,
  challengesOfTransaction,
  consumeTransaction,
  createChallenges,
  deleteChallengesOf,
  settleChallenge,
} from "../challenge/mod.ts";
import { listBindings } from "../machine/mod.ts";
import { loadPolicySet } from "../policy/mod.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { findTokensBySerials, initToken, type TokenWithInfo } from "../token/mod.ts";
import { checkUserPassword } from "../user/mod.ts";
import {
  addTokenToContainer,
  type Container,
  containerInfoValue,
  deleteInternalContainerInfo,
  markContainerSynchronized,
  reloadContainer,
  resetContainerTimestamps,
  setInternalContainerInfo,
} from "./mod.ts";

/** Info key of the registration state. */
export const REGISTRATION_STATE = "registration_state";

/** The registration states (absent info = not registered). */
export type RegistrationState =
  | ""
  | "client_wait"
  | "registered"
  | "rollover"
  | "rollover_completed";

const REGISTERED_STATES: readonly string[] = ["registered", "rollover", "rollover_completed"];

/** The smartphone options and their only values (privacyIDEA's defaults). */
const OPTIONS = {
  key_algorithm: "secp384r1",
  hash_algorithm: "SHA256",
  encrypt_key_algorithm: "x25519",
  encrypt_algorithm: "AES",
  encrypt_mode: "GCM",
} as const;

/** The registration info keys unregistering removes. */
const REGISTRATION_KEYS = [
  "public_key_client",
  "device",
  "server_url",
  REGISTRATION_STATE,
  "challenge_ttl",
  "initially_synchronized",
];

const FINALIZE = "container/register/finalize";
const SYNCHRONIZE = "container/synchronize";
const TERMINATE_CLIENT = "container/register/terminate/client";
const ROLLOVER = "container/rollover";

/** Longest `scope` a challenge stores (URLs are far shorter). */
const MAX_SCOPE = 1000;
/** Longest `container_dict_client` (the app lists its tokens). */
const MAX_CLIENT_DICT = 100_000;
const MAX_DEVICE_PART = 200;
const MAX_PASSPHRASE = 200;
/** Open challenges a container keeps: an older one is dropped when a new one exceeds this. */
const MAX_OPEN_CHALLENGES = 20;

const SIGNATURE_ERROR = "Could not verify signature!";

/**
 * Session of a registration started by a login (`enroll_via_multichallenge=smartphone`): its
 * finalize marks the challenge answered instead of deleting it, and the login's last
 * `/validate/check` consumes it.
 */
export const ENROLLMENT_SESSION = "enrollment";

function signatureError(): AppError {
  return new AppError(SIGNATURE_ERROR, 3002);
}

function notRegistered(message = "Container is not registered."): AppError {
  return new AppError(message, 3001);
}

/** The container's registration state (info `registration_state`; absent: ""). */
export function registrationStateOf(c: Container): RegistrationState {
  return (containerInfoValue(c, REGISTRATION_STATE) ?? "") as RegistrationState;
}

function requireSmartphone(c: Container): void {
  if (c.type !== "smartphone") {
    throw new NotImplementedError("Registration is not implemented for this container type.");
  }
}

/** What the container-scope policies say for this container (spec 13 §2.4, §2.13). */
export interface ContainerPolicies {
  /** `privacyIDEA_server_url`, undefined when no policy sets it. */
  serverUrl: string | undefined;
  registrationTtl: number;
  challengeTtl: number;
  sslVerify: "True" | "False";
  /** The client policies the app gets (`policies` of finalize and synchronize). */
  client: ClientPolicies;
  /**
   * `/container/rollover` is allowed: a policy sets `container_client_rollover`, or the
   * container scope has no active policy at all (privacyIDEA's `allowed()`).
   */
  isClientRolloverAllowed: boolean;
}

/** The four switches reported to the app. */
export interface ClientPolicies {
  container_client_rollover: boolean;
  initially_add_tokens_to_container: boolean;
  disable_client_token_deletion: boolean;
  disable_client_container_unregister: boolean;
}

const CLIENT_ACTIONS = [
  "container_client_rollover",
  "initially_add_tokens_to_container",
  "disable_client_token_deletion",
  "disable_client_container_unregister",
] as const;

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number.parseInt(value ?? "", 10);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * Resolves the container-scope policies for `c`: matched against its owner
 * (user, resolver) and its realms; a container without an owner matches only
 * policies that name no user or resolver, and without realms only those that
 * name no realm.
 */
export async function containerPolicies(
  deps: Deps,
  c: Container,
  options: { client?: string | null } = {},
): Promise<ContainerPolicies> {
  const set = await loadPolicySet(deps);
  const m = set.matcher({
    scope: "container",
    user: c.owner?.login ?? "",
    resolver: c.owner?.resolver ?? "",
    realm: c.realms,
    client: options.client || null,
    conditions: {},
  });
  const client = {} as ClientPolicies;
  for (const action of CLIENT_ACTIONS) client[action] = (await m.namedBool(action)).length > 0;
  const ssl = await m.value("container_ssl_verify");
  return {
    serverUrl: await m.value("privacyIDEA_server_url"),
    registrationTtl: positiveInt(await m.value("container_registration_ttl"), 10),
    challengeTtl: positiveInt(await m.value("container_challenge_ttl"), 2),
    sslVerify: ssl === "False" ? "False" : "True",
    client,
    isClientRolloverAllowed: client.container_client_rollover ||
      !set.hasActivePolicies("container"),
  };
}

function requireServerUrl(p: ContainerPolicies): string {
  if (!p.serverUrl) {
    throw new PolicyError(
      "Missing enrollment policy privacyIDEA_server_url. Cannot register container.",
    );
  }
  return p.serverUrl;
}

/** Python truthiness of a request value (`passphrase_user`, `rollover`). */
export function isPyTruthy(v: unknown): boolean {
  return v !== undefined && v !== null && v !== false && v !== "" && v !== 0;
}

function optionalString(params: Record<string, unknown>, name: string, max: number): string {
  const v = params[name];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
    throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
  }
  const s = String(v);
  if (s.length > max) {
    throw new ParameterError(`Cannot parse parameter "${name}": at most ${max} characters`);
  }
  return s;
}

function requiredString(params: Record<string, unknown>, name: string, max: number): string {
  const v = params[name];
  if (v === undefined || v === null) throw new ParameterError(`Missing parameter: '${name}'`);
  return optionalString(params, name, max);
}

/** `extra_data`: a JSON object (or its text) of extra QR parameters. */
function extraDataOf(v: unknown): [string, string][] {
  if (v === undefined || v === null || v === "") return [];
  let obj: unknown = v;
  if (typeof v === "string") {
    try {
      obj = JSON.parse(v);
    } catch {
      obj = undefined;
    }
  }
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
    throw new ParameterError(`Cannot parse parameter "extra_data": expected a JSON object`);
  }
  const entries = Object.entries(obj as Record<string, unknown>);
  if (entries.length > 20) {
    throw new ParameterError(`Cannot parse parameter "extra_data": at most 20 entries`);
  }
  return entries.map(([k, val]) => {
    const text = typeof val === "string" ? val : JSON.stringify(val) ?? "";
    if (k.length > 100 || text.length > 500) {
      throw new ParameterError(`Cannot parse parameter "extra_data": an entry is too long`);
    }
    return [k, text];
  });
}

/** Data a container challenge keeps (JSON in the challenge row). */
interface ChallengeData {
  type: "container";
  scope: string;
  passphrase_prompt?: string;
  /** The registration passphrase, encrypted under the config key, or "". */
  passphrase_response?: string;
  passphrase_user?: boolean;
}

/** A registration's challenge (made by the server with its passphrase fields, never by the app). */
function isFinalizeChallenge(data: string): boolean {
  try {
    const parsed = JSON.parse(data);
    return typeof parsed === "object" && parsed !== null && "passphrase_prompt" in parsed;
  } catch {
    return false;
  }
}

/** A new challenge for the container; its nonce, time stamp and transaction id. */
async function newChallenge(
  deps: Deps,
  c: Container,
  data: ChallengeData,
  minutes: number,
  session = "",
): Promise<{ nonce: string; timeStamp: string; transactionId: string }> {
  const nonce = toHex(deps.random.bytes(20));
  const system = await loadSystemConfig(deps);
  const { transactionId } = await createChallenges(deps, system, [{
    serial: c.serial,
    type: "container",
    message: "",
    challenge: nonce,
    data: JSON.stringify(data),
    validity: minutes * 60,
    session,
  }]);
  // the signed time stamp is the stored creation time, so it reads the same on every node
  const [row] = await challengesOfTransaction(deps, transactionId, [c.serial]);
  // the app asks without a login: keep the number of open challenges bounded (a registration's
  // own challenge is never pushed out by them)
  const open = (await challengesOfSerial(deps, c.serial)).filter((r) =>
    r.transactionId !== transactionId && !isFinalizeChallenge(r.data)
  );
  for (const old of open.slice(0, Math.max(0, open.length - (MAX_OPEN_CHALLENGES - 1)))) {
    await consumeTransaction(deps, old.transactionId);
  }
  return { nonce, timeStamp: pyIsoUtc(row.createdAt), transactionId };
}

/** What the app sent with a signed request. */
interface SignedRequest {
  signature: Uint8Array;
  scope: string;
  deviceBrand?: string;
  deviceModel?: string;
  /** The passphrase the app sent (only read for `passphrase_user` registrations). */
  passphrase?: string;
  encKey?: string;
  containerDict?: string;
}

/**
 * Finds the open challenge of `c` the request's signature answers and uses it
 * up (privacyIDEA's `validate_challenge`): scope equal, the message signed by
 * `key`. True when one was consumed by this call.
 */
async function consumeChallenge(
  deps: Deps,
  c: Container,
  key: KeyObject,
  req: SignedRequest,
): Promise<boolean> {
  const now = deps.clock.now();
  const hash = containerInfoValue(c, "hash_algorithm") ?? OPTIONS.hash_algorithm;
  for (const row of await challengesOfSerial(deps, c.serial)) {
    // an answered one (a login's registration, waiting for its last check) is used up
    if (row.expiresAt < now || row.isAnswered) continue;
    let data: ChallengeData;
    try {
      data = JSON.parse(row.data);
    } catch {
      continue;
    }
    if (data?.type !== "container" || data.scope !== req.scope) continue;
    let passphrase = "";
    if (data.passphrase_user) {
      if (!req.passphrase || !c.owner) continue;
      if (!(await checkUserPassword(deps, c.owner, req.passphrase))) continue;
      passphrase = req.passphrase;
    } else if (data.passphrase_response) {
      try {
        passphrase = decryptSecretText(deps.keys.config, data.passphrase_response);
      } catch {
        continue;
      }
    }
    const text = containerMessage({
      nonce: row.challenge,
      timeStamp: pyIsoUtc(row.createdAt),
      serial: c.serial,
      scope: data.scope,
      deviceBrand: req.deviceBrand,
      deviceModel: req.deviceModel,
      passphrase,
      encKey: req.encKey,
      containerDict: req.containerDict,
    });
    if (!verifyEcdsaDer(key, text, req.signature, hash)) continue;
    // a login's registration stays, answered, for the login's last /validate/check; one
    // conditional update, so of parallel requests with this signature only one answers it
    if (row.session === ENROLLMENT_SESSION) return await settleChallenge(deps, row.id, "answered");
    // one conditional delete: of parallel requests with this signature only one gets the row
    const removed = await consumeTransaction(deps, row.transactionId);
    return removed.includes(c.serial);
  }
  return false;
}

function signatureOf(params: Record<string, unknown>): Uint8Array {
  const text = requiredString(params, "signature", 1000);
  const sig = decodeBase64Any(text);
  if (!sig || sig.length === 0) throw signatureError();
  return sig;
}

/** The app's registered key; ERR3001 when there is none. */
function registeredKey(c: Container) {
  const pem = containerInfoValue(c, "public_key_client");
  if (pem === undefined) {
    throw notRegistered("The container is not registered or was unregistered!");
  }
  const key = parseEcPublicKeyPem(pem);
  if (!key) throw notRegistered("The container is not registered or was unregistered!");
  return key;
}

/** Request parameters of a registration (initialize, rollover). */
export interface RegistrationInput {
  passphrase_prompt?: unknown;
  passphrase_response?: unknown;
  passphrase_user?: unknown;
  extra_data?: unknown;
}

/**
 * Starts a registration (`rollover`: a rollover) of `c`: a new finalize
 * challenge (all older challenges of the container are dropped) and the QR
 * code the app scans. The response value of `/container/register/initialize`.
 */
async function startRegistration(
  deps: Deps,
  c: Container,
  policies: ContainerPolicies,
  input: RegistrationInput,
  isRollover: boolean,
  session = "",
): Promise<Record<string, unknown>> {
  const serverUrl = requireServerUrl(policies);
  const params = input as Record<string, unknown>;
  let prompt = optionalString(params, "passphrase_prompt", MAX_PASSPHRASE);
  const response = optionalString(params, "passphrase_response", MAX_PASSPHRASE);
  const passphraseUser = params.passphrase_user;
  const isUserPassphrase = isPyTruthy(passphraseUser);
  if (response && isUserPassphrase) {
    throw new ParameterError(
      "passphrase_response and passphrase_user cannot be set at the same time!",
    );
  }
  if (isUserPassphrase && !prompt) prompt = "Please enter the passphrase of your user store.";
  const extra = extraDataOf(params.extra_data);
  const sendPassphrase = passphraseUser === undefined || passphraseUser === null ||
      passphraseUser === false || passphraseUser === ""
    ? "False"
    : passphraseUser === true
    ? "True"
    : String(passphraseUser);

  await resetContainerTimestamps(deps, c);
  await deleteChallengesOf(deps, [c.serial]);
  const scope = endpointUrl(serverUrl, FINALIZE);
  const challenge = await newChallenge(
    deps,
    c,
    {
      type: "container",
      scope,
      passphrase_prompt: prompt,
      passphrase_response: response ? encryptSecret(deps.keys.config, response, deps.random) : "",
      passphrase_user: isUserPassphrase,
    },
    policies.registrationTtl,
    session,
  );
  const info: Record<string, string> = { ...OPTIONS };
  if (isRollover) {
    info[REGISTRATION_STATE] = "rollover";
    info.rollover_server_url = serverUrl;
    info.rollover_challenge_ttl = String(policies.challengeTtl);
  } else {
    info[REGISTRATION_STATE] = "client_wait";
    info.server_url = serverUrl;
    info.challenge_ttl = String(policies.challengeTtl);
  }
  await setInternalContainerInfo(deps, c, info);
  const url = registrationUrl({
    serial: c.serial,
    nonce: challenge.nonce,
    timeStamp: challenge.timeStamp,
    serverUrl,
    ttl: policies.registrationTtl,
    keyAlgorithm: OPTIONS.key_algorithm,
    hashAlgorithm: OPTIONS.hash_algorithm,
    sslVerify: policies.sslVerify,
    passphrasePrompt: prompt,
    sendPassphrase,
    extra,
  });
  return {
    container_url: {
      description: "URL for privacyIDEA Container Registration",
      value: url,
      img: qrSvgDataUri(url),
    },
    nonce: challenge.nonce,
    time_stamp: challenge.timeStamp,
    key_algorithm: OPTIONS.key_algorithm,
    hash_algorithm: OPTIONS.hash_algorithm,
    ssl_verify: policies.sslVerify,
    ttl: policies.registrationTtl,
    passphrase_prompt: prompt,
    send_passphrase: isUserPassphrase
      ? (passphraseUser === true ? true : passphraseUser)
      : (passphraseUser ?? false),
    server_url: serverUrl,
    transaction_id: challenge.transactionId,
  };
}

/**
 * `POST /container/register/initialize`: starts the registration, or with
 * `rollover` a rollover to a new device, of a smartphone container. `session`
 * marks the registration challenge ({@link ENROLLMENT_SESSION} for a login's).
 */
export async function initRegistration(
  deps: Deps,
  c: Container,
  policies: ContainerPolicies,
  input: RegistrationInput & { rollover?: unknown },
  options: { session?: string } = {},
): Promise<Record<string, unknown>> {
  requireSmartphone(c);
  const isRollover = isPyTruthy(input.rollover);
  const state = registrationStateOf(c);
  if (isRollover) {
    if (!REGISTERED_STATES.includes(state)) throw notRegistered();
  } else if (state !== "" && state !== "client_wait") {
    throw new AppError("Container is already registered.", 3000);
  }
  const value = await startRegistration(deps, c, policies, input, isRollover, options.session);
  return { ...value, offline_tokens: await offlineSerials(deps, await tokensOf(deps, c)) };
}

/**
 * `POST /container/register/finalize`: the app registers its public key with a
 * signature over the registration challenge. In a rollover the new key
 * replaces the old one and every online token gets a new secret.
 */
export async function finalizeRegistration(
  deps: Deps,
  c: Container,
  policies: ContainerPolicies,
  params: Record<string, unknown>,
): Promise<{ success: true; policies: ClientPolicies }> {
  requireSmartphone(c);
  const signature = signatureOf(params);
  const pem = requiredString(params, "public_client_key", 4096);
  const brand = optionalString(params, "device_brand", MAX_DEVICE_PART);
  const model = optionalString(params, "device_model", MAX_DEVICE_PART);
  const passphrase = optionalString(params, "passphrase", MAX_PASSPHRASE);
  const key = parseEcPublicKeyPem(pem);
  if (!key) throw signatureError();
  const state = registrationStateOf(c);
  const serverUrl =
    (state === "rollover"
      ? containerInfoValue(c, "rollover_server_url")
      : containerInfoValue(c, "server_url")) ?? " ";
  const isConsumed = await consumeChallenge(deps, c, key, {
    signature,
    scope: endpointUrl(serverUrl, FINALIZE),
    deviceBrand: brand,
    deviceModel: model,
    passphrase,
  });
  if (!isConsumed) throw signatureError();

  const device = `${brand}${model ? ` ${model}` : ""}`;
  const info: Record<string, string> = { public_key_client: pem };
  if (device !== "") info.device = device;
  else await deleteInternalContainerInfo(deps, c, ["device"]);
  if (state !== "rollover") info[REGISTRATION_STATE] = "registered";
  if (policies.client.initially_add_tokens_to_container) info.initially_synchronized = "False";
  if (state === "rollover") {
    info.server_url = containerInfoValue(c, "rollover_server_url") ?? "";
    info.challenge_ttl = containerInfoValue(c, "rollover_challenge_ttl") ?? "2";
  }
  await setInternalContainerInfo(deps, c, info);
  if (state === "rollover") {
    await deleteInternalContainerInfo(deps, c, ["rollover_server_url", "rollover_challenge_ttl"]);
    const tokens = await tokensOf(deps, c);
    const offline = new Set(await offlineSerials(deps, tokens));
    for (const t of tokens) {
      if (offline.has(t.serial)) continue;
      // a token that cannot be rolled over keeps its secret; the rollover goes on
      await rollTokenOver(deps, t).catch((err) =>
        deps.log.warn("A token of a container rollover kept its secret", {
          serial: t.serial,
          container: c.serial,
          reason: err instanceof Error ? err.message : String(err),
        })
      );
    }
    await deleteChallengesOf(deps, [c.serial]);
    await setInternalContainerInfo(deps, c, { [REGISTRATION_STATE]: "rollover_completed" });
  }
  return { success: true, policies: policies.client };
}

/**
 * `POST /container/challenge`: a challenge for the app's next signed request
 * to `scope`. Only a registered container gets one.
 */
export async function createContainerChallenge(
  deps: Deps,
  c: Container,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const scope = requiredString(params, "scope", MAX_SCOPE);
  if (!REGISTERED_STATES.includes(registrationStateOf(c))) throw notRegistered();
  const minutes = positiveInt(containerInfoValue(c, "challenge_ttl"), 2);
  const ch = await newChallenge(deps, c, { type: "container", scope }, minutes);
  return {
    nonce: ch.nonce,
    time_stamp: ch.timeStamp,
    enc_key_algorithm: containerInfoValue(c, "encrypt_key_algorithm") ?? null,
    transaction_id: ch.transactionId,
  };
}

/** The container's tokens with their info, sorted by serial. */
async function tokensOf(deps: Deps, c: Container): Promise<TokenWithInfo[]> {
  const tokens = await findTokensBySerials(deps, c.tokens.map((t) => t.serial));
  return tokens.sort((a, b) => a.serial < b.serial ? -1 : a.serial > b.serial ? 1 : 0);
}

/** Serials of the tokens that are bound to a machine for offline use. */
async function offlineSerials(deps: Deps, tokens: TokenWithInfo[]): Promise<string[]> {
  const out: string[] = [];
  for (const t of tokens) {
    if (t.type !== "hotp" && t.type !== "totp" && t.type !== "daypassword") continue;
    const bindings = await listBindings(deps, { serial: t.serial });
    if (bindings.some((b) => "application" in b && b.application === "offline")) {
      out.push(t.serial);
    }
  }
  return out;
}

/**
 * Gives a token a new secret with its settings kept (privacyIDEA's token
 * rollover) and returns the enrolment URL the app scans.
 */
async function rollTokenOver(deps: Deps, t: TokenWithInfo): Promise<string | undefined> {
  const params: Record<string, unknown> = {
    serial: t.serial,
    type: t.type,
    genkey: "1",
    rollover: "1",
    otplen: String(t.otplen),
  };
  for (const k of ["hashlib", "timeStep", "timeWindow", "timeShift"]) {
    const v = t.info[k]?.value;
    if (v !== undefined && t.info[k].type !== "password") params[k] = v;
  }
  // privacyIDEA's plain init_token: no verify_enrollment or two-step for an app that scans
  const result = await initToken(deps, params, { isViaMultichallenge: true });
  const detail = result.detail as Record<string, { value?: unknown } | undefined>;
  const url = detail.pushurl?.value ?? detail.googleurl?.value;
  return typeof url === "string" ? url : undefined;
}

/** One token as the app lists it in `container_dict_client`. */
interface ClientToken {
  serial?: unknown;
  tokentype?: unknown;
}

function clientTokensOf(text: string): ClientToken[] {
  if (text === "") return [];
  let dict: unknown;
  try {
    dict = JSON.parse(text);
  } catch {
    dict = undefined;
  }
  if (typeof dict !== "object" || dict === null || Array.isArray(dict)) {
    throw new ParameterError(
      `Cannot parse parameter "container_dict_client": expected a JSON object`,
    );
  }
  const tokens = (dict as { tokens?: unknown }).tokens ?? [];
  if (!Array.isArray(tokens)) {
    throw new ParameterError(
      `Cannot parse parameter "container_dict_client": "tokens" must be a list`,
    );
  }
  return tokens.filter((t): t is ClientToken => typeof t === "object" && t !== null);
}

/**
 * `POST /container/synchronize`: checks the app's signature over the
 * challenge, its fresh encryption key and its token list, and answers what
 * the app lacks (new secrets as enrolment URLs) and what it has, encrypted
 * to that key.
 */
export async function synchronizeContainer(
  deps: Deps,
  c: Container,
  policies: ContainerPolicies,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  // a generic or YubiKey container can never be registered
  if (c.type !== "smartphone") {
    throw notRegistered("The container is not registered or was unregistered!");
  }
  const signature = signatureOf(params);
  const encKey = requiredString(params, "public_enc_key_client", 200);
  const dictText = optionalString(params, "container_dict_client", MAX_CLIENT_DICT);
  const brand = optionalString(params, "device_brand", MAX_DEVICE_PART);
  const model = optionalString(params, "device_model", MAX_DEVICE_PART);
  const key = registeredKey(c);
  const clientTokens = clientTokensOf(dictText);
  // the server's key pair of this answer, and a check of the app's key before the challenge
  // is used up (a bad key would otherwise cost the app its challenge)
  const serverPrivate = deps.random.bytes(X25519_KEY_BYTES);
  const appKey = decodeBase64Any(encKey);
  if (!appKey || !x25519Shared(serverPrivate, appKey)) {
    throw new ParameterError(
      `Cannot parse parameter "public_enc_key_client": expected a base64 X25519 public key`,
    );
  }
  const serverUrl = containerInfoValue(c, "server_url") ?? " ";
  const isConsumed = await consumeChallenge(deps, c, key, {
    signature,
    scope: endpointUrl(serverUrl, SYNCHRONIZE),
    deviceBrand: brand,
    deviceModel: model,
    encKey,
    containerDict: dictText,
  });
  if (!isConsumed) throw signatureError();

  const state = registrationStateOf(c);
  const clientSerials = new Set(
    clientTokens.map((t) => t.serial).filter((s): s is string => typeof s === "string"),
  );
  let tokens = (await tokensOf(deps, c)).filter((t) => t.type !== "sms");
  // the first synchronisation may take the owner's tokens the app already holds
  if (
    policies.client.initially_add_tokens_to_container &&
    containerInfoValue(c, "initially_synchronized") !== "True"
  ) {
    await setInternalContainerInfo(deps, c, { initially_synchronized: "True" });
    const inContainer = new Set(tokens.map((t) => t.serial));
    const named = [...clientSerials].filter((s) => !inContainer.has(s));
    for (const t of await findTokensBySerials(deps, named)) {
      // only the owner's own tokens: an app must not pull in anyone else's
      if (!c.owner || !t.owner || t.owner.uid !== c.owner.uid) continue;
      if (t.owner.resolver !== c.owner.resolver) continue;
      try {
        await addTokenToContainer(deps, c, t);
      } catch (err) {
        if (!(err instanceof ParameterError)) throw err;
      }
    }
    const now = await reloadContainer(deps, c);
    tokens = (await tokensOf(deps, now)).filter((t) => t.type !== "sms");
  }
  const offline = new Set(await offlineSerials(deps, tokens));
  const serverSerials = tokens.map((t) => t.serial);
  let missing: string[];
  let same: string[];
  if (state === "rollover_completed") {
    missing = serverSerials.filter((s) => !offline.has(s));
    same = serverSerials.filter((s) => offline.has(s) && clientSerials.has(s));
  } else {
    missing = serverSerials.filter((s) => !clientSerials.has(s) && !offline.has(s));
    same = serverSerials.filter((s) => clientSerials.has(s));
  }
  const add: string[] = [];
  for (const t of tokens.filter((x) => missing.includes(x.serial))) {
    try {
      const url = await rollTokenOver(deps, t);
      if (url) add.push(url);
    } catch (err) {
      // privacyIDEA leaves a token it cannot roll over out of `add`
      deps.log.warn("A container token was left out of a synchronisation", {
        serial: t.serial,
        container: c.serial,
        reason: err instanceof Error ? err.message : String(err),
      });
    }
  }
  const byserial = new Map(tokens.map((t) => [t.serial, t]));
  const update = same.map((s) => {
    const t = byserial.get(s)!;
    const entry: Record<string, unknown> = {
      serial: t.serial,
      tokentype: t.type,
      offline: offline.has(s),
    };
    if (!offline.has(s) && (t.type === "hotp" || t.type === "totp" || t.type === "daypassword")) {
      entry.counter = t.count;
    }
    return entry;
  });
  const plainTokens: Record<string, unknown> = { add, update };
  if (state === "rollover_completed") {
    plainTokens.offline = serverSerials.filter((s) => offline.has(s) && !clientSerials.has(s));
  }
  const plaintext = pythonJson({
    container: { type: c.type, serial: c.serial },
    tokens: plainTokens,
  });
  const sealed = sealForApp(encKey, plaintext, serverPrivate, deps.random.bytes(GCM_IV_BYTES))!;
  await markContainerSynchronized(deps, c);
  if (state === "rollover_completed") {
    await setInternalContainerInfo(deps, c, { [REGISTRATION_STATE]: "registered" });
  }
  return {
    encryption_algorithm: "AES",
    encryption_params: {
      algorithm: "AES",
      mode: "GCM",
      init_vector: sealed.initVector,
      tag: sealed.tag,
    },
    container_dict_server: sealed.ciphertext,
    public_server_key: sealed.publicServerKey,
    server_url: serverUrl,
    policies: policies.client,
  };
}

/** Unregisters the container: its registration info and all its challenges go. */
export async function terminateRegistration(deps: Deps, c: Container): Promise<{ success: true }> {
  await deleteInternalContainerInfo(deps, c, REGISTRATION_KEYS);
  await deleteChallengesOf(deps, [c.serial]);
  return { success: true };
}

/**
 * `POST /container/register/terminate/client`: the app unregisters with a
 * signature over a challenge for that endpoint; refused when a container
 * policy `disable_client_container_unregister` matches.
 */
export async function terminateByClient(
  deps: Deps,
  c: Container,
  policies: ContainerPolicies,
  params: Record<string, unknown>,
): Promise<{ success: true }> {
  if (policies.client.disable_client_container_unregister) {
    throw new PolicyError(
      "The action is not allowed! Policy disable_client_container_unregister is set.",
    );
  }
  const signature = signatureOf(params);
  const key = registeredKey(c);
  const serverUrl = containerInfoValue(c, "server_url") ?? " ";
  const isConsumed = await consumeChallenge(deps, c, key, {
    signature,
    scope: endpointUrl(serverUrl, TERMINATE_CLIENT),
    deviceBrand: optionalString(params, "device_brand", MAX_DEVICE_PART),
    deviceModel: optionalString(params, "device_model", MAX_DEVICE_PART),
  });
  if (!isConsumed) throw signatureError();
  return await terminateRegistration(deps, c);
}

/**
 * `POST /container/rollover`: the registered (old) device starts a move to a
 * new device with a signature over a `container/rollover` challenge; the
 * answer is a new registration the new device finalizes.
 */
export async function clientRollover(
  deps: Deps,
  c: Container,
  policies: ContainerPolicies,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (!policies.isClientRolloverAllowed) {
    throw new PolicyError(
      "Container actions are defined, but the action container_client_rollover is not allowed!",
    );
  }
  const serverUrl = requireServerUrl(policies);
  if (!REGISTERED_STATES.includes(registrationStateOf(c))) throw notRegistered();
  const signature = signatureOf(params);
  const key = registeredKey(c);
  // refusals of the new registration's parameters come before the challenge is used up
  extraDataOf(params.extra_data);
  if (
    optionalString(params, "passphrase_response", MAX_PASSPHRASE) &&
    isPyTruthy(params.passphrase_user)
  ) {
    throw new ParameterError(
      "passphrase_response and passphrase_user cannot be set at the same time!",
    );
  }
  const isConsumed = await consumeChallenge(deps, c, key, {
    signature,
    scope: endpointUrl(serverUrl, ROLLOVER),
    deviceBrand: optionalString(params, "device_brand", MAX_DEVICE_PART),
    deviceModel: optionalString(params, "device_model", MAX_DEVICE_PART),
  });
  if (!isConsumed) throw signatureError();
  return await startRegistration(deps, c, policies, params, true);
}

/**
 * Container policy `hide_specific_error_message` (privacyIDEA 3.13): the app's endpoints
 * answer failures with a generic message. Matched on the container's owner and realms; for
 * a container that does not exist, on any policy of the scope that names no user or realm.
 */
export async function hidesContainerErrors(
  deps: Deps,
  c: Container | undefined,
  options: { client?: string | null } = {},
): Promise<boolean> {
  const set = await loadPolicySet(deps);
  if (!set.hasActivePolicies("container")) return false;
  const m = set.matcher({
    scope: "container",
    user: c?.owner?.login ?? "",
    resolver: c?.owner?.resolver ?? "",
    realm: c?.realms ?? [],
    client: options.client || null,
    conditions: {},
  });
  return (await m.namedBool("hide_specific_error_message")).length > 0;
}
