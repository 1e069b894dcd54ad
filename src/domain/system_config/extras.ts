/**
 * privacyIDEA's `/system/` routes beside the key-value configuration (spec 14 §20):
 * random data, the node list, token defaults, the test of a token type's
 * configuration and the name lists for enrolment forms.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { toHex } from "../../lib/random.ts";
import { base32Encode } from "../../lib/otp.ts";
import { setSystemConfig } from "./mod.ts";
import { tokenTypeOf } from "../token/types/mod.ts";
import { sendAdhocMail } from "../smtp/mod.ts";
import { listCaConnectors } from "../caconnector/mod.ts";

/** The most random bytes one `GET /system/random` hands out. */
export const MAX_RANDOM_BYTES = 1024;

const ENCODINGS = ["hex", "b64", "b32"] as const;

/**
 * `GET /system/random`: `len` random bytes (default 20) as lower-case hex, standard
 * base64 (`b64`) or unpadded RFC 4648 base32 (`b32`, e.g. for TOTP seeds).
 */
export function randomText(deps: Deps, lenText: string | undefined, encode: string | undefined) {
  const text = (lenText ?? "").trim();
  const length = text === "" ? 20 : /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(length >= 1 && length <= MAX_RANDOM_BYTES)) {
    throw new ParameterError(`len: expected a number of bytes from 1 to ${MAX_RANDOM_BYTES}`);
  }
  const encoding = encode === undefined || encode === "" ? "hex" : encode;
  if (!(ENCODINGS as readonly string[]).includes(encoding)) {
    throw new ParameterError(`encode: expected one of ${ENCODINGS.join(", ")}`);
  }
  const bytes = deps.random.bytes(length);
  if (encoding === "b64") return btoa(String.fromCharCode(...bytes));
  if (encoding === "b32") return base32Encode(bytes);
  return toHex(bytes);
}

// a fixed namespace, so a node's uuid follows from its name alone (RFC 4122 name-based, SHA-1)
const NODE_NAMESPACE = "6f3c5a2e-8d41-4b7a-9c0e-5e2f1d7a3b90";

/** The RFC 4122 version 5 UUID of `name` in {@link NODE_NAMESPACE}. */
async function nameUuid(name: string): Promise<string> {
  const ns = NODE_NAMESPACE.replaceAll("-", "").match(/../g)!.map((h) => parseInt(h, 16));
  const data = new Uint8Array([...ns, ...new TextEncoder().encode(name)]);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-1", data)).slice(0, 16);
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = toHex(hash);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/**
 * `GET /system/nodes`: the node answering, `{name, uuid}`. Tessera keeps no register of
 * nodes (privacyIDEA's nodename table); the uuid is derived from the node name, so every
 * process of one node answers the same one.
 */
export async function systemNodes(deps: Deps): Promise<{ name: string; uuid: string }[]> {
  return [{ name: deps.nodeName, uuid: await nameUuid(deps.nodeName) }];
}

/** The keys `POST /system/setDefault` writes (matched case-insensitively, as privacyIDEA). */
export const DEFAULT_KEYS = [
  "DefaultMaxFailCount",
  "DefaultSyncWindow",
  "DefaultCountWindow",
  "DefaultOtpLen",
  "DefaultResetFailCount",
] as const;

/**
 * `POST /system/setDefault`: the token defaults among the parameters, validated and
 * stored in one transaction; `{key: "insert"|"update"}`. None given: ERR77.
 */
export async function setTokenDefaults(
  deps: Deps,
  params: Record<string, unknown>,
): Promise<Record<string, "insert" | "update">> {
  const lower = new Map(Object.entries(params).map(([k, v]) => [k.toLowerCase(), v]));
  const pairs: Record<string, unknown> = {};
  for (const key of DEFAULT_KEYS) {
    if (!lower.has(key.toLowerCase())) continue;
    if (key === "DefaultResetFailCount") {
      // privacyIDEA reads it in one counter step only; Tessera always clears the fail counter
      // of a token that authenticates (below its maximum), so the key would change nothing
      throw new ParameterError(
        "DefaultResetFailCount is not supported: Tessera always resets the fail counter " +
          "of a token that authenticates successfully",
      );
    }
    pairs[key] = lower.get(key.toLowerCase());
  }
  if (Object.keys(pairs).length === 0) {
    throw new ParameterError(`Usage: parameters are: ${DEFAULT_KEYS.join(", ")}`, 77);
  }
  return await setSystemConfig(deps, pairs);
}

const TEST_SUCCESSFUL = "Successfully sent email. Please check your inbox.";

function str(params: Record<string, unknown>, name: string): string {
  const v = params[name];
  return typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "";
}

function required(params: Record<string, unknown>, name: string): string {
  const v = str(params, name);
  if (v === "") throw new ParameterError(`Missing parameter: '${name}'`);
  return v;
}

/**
 * `POST /system/test/<tokentype>`: tests a token type's configuration. `email` sends
 * `Your TEST OTP` through the SMTP server the parameters name; other types have nothing
 * to test (`false`, `Not implemented`), as in privacyIDEA.
 */
export async function testTokenConfig(
  deps: Deps,
  type: string,
  params: Record<string, unknown>,
): Promise<{ value: boolean; message: string }> {
  if (tokenTypeOf(type.toLowerCase()) === undefined) {
    throw new ParameterError(`Unknown token type: ${type.slice(0, 50)}`, 1610);
  }
  if (type.toLowerCase() !== "email") return { value: false, message: "Not implemented" };
  const server = required(params, "email.mailserver");
  const sender = required(params, "email.mailfrom");
  const recipient = required(params, "email.recipient");
  const portText = str(params, "email.port") || "25";
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw new ParameterError("email.port: expected a port from 1 to 65535");
  }
  const tls = ["1", "true", "yes", "on"].includes(str(params, "email.tls").toLowerCase());
  const sent = await sendAdhocMail(deps, {
    server,
    port: Number(portText),
    tls,
    username: str(params, "email.username"),
    password: str(params, "email.password"),
    sender,
  }, { to: [recipient], subject: "Your TEST OTP", body: "This is a test." });
  return { value: sent, message: sent ? TEST_SUCCESSFUL : "Could not send email." };
}

/** `GET /system/names/caconnector`: the CA connectors without their configuration data. */
export async function caConnectorNameList(deps: Deps) {
  return (await listCaConnectors(deps)).map((c) => ({ ...c, data: {} }));
}
