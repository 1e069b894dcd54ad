/**
 * Authentication items (`GET /machine/authitem[/<application>]`, spec 07 §5):
 * SSH keys, LUKS challenge responses and offline OTP hashes of the tokens
 * bound to a host.
 *
 * @module
 */
import { createHmac } from "node:crypto";
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import type { OtpHash } from "../../lib/otp.ts";
import { fromHex, toHex } from "../../lib/random.ts";
import { findTokenBySerial, infoPlain, tokenSecret, type TokenWithInfo } from "../token/mod.ts";
import { selectBindings } from "./bindings.ts";
import type { BindingRow } from "./machine_token_store.ts";
import { type MangleContext, mangleParams } from "./mangle.ts";
import { offlineItem } from "./offline.ts";

/** Request of `GET /machine/authitem[/<application>]`. */
export interface AuthItemRequest {
  hostname: string;
  /** Only this application (path variable). */
  application?: string;
  /** LUKS: hex challenge; offline: PIN+OTP whose PIN goes into the hashes. */
  challenge?: string;
  /** Exact serial or `*` pattern. */
  serial?: string;
  /** Option filters (`user`, `service_id`, …). */
  filters?: Record<string, string>;
  userAgent?: string;
  /** When given, auth-scope `mangle` policies rewrite the parameters first. */
  mangle?: MangleContext;
}

/** One authentication item; binding options are merged in. */
export type AuthItem = Record<string, unknown>;

/** Bytes of the random LUKS challenge when the client sends none. */
const LUKS_CHALLENGE_BYTES = 32;
const MAX_CHALLENGE = 4096;

interface BuildContext {
  deps: Deps;
  req: AuthItemRequest;
  token: TokenWithInfo;
  binding: BindingRow;
}

function sshItem({ deps, req, token, binding }: BuildContext): AuthItem | undefined {
  if (token.type !== "sshkey" || !token.active) return undefined;
  const user = req.filters?.user;
  if (user !== undefined && binding.options.user !== user) return undefined;
  const sshkey = infoPlain(deps, token.info, "ssh_key");
  if (!sshkey) return undefined;
  const item: AuthItem = { sshkey };
  if (token.owner) item.username = token.owner.login;
  return item;
}

function luksItem({ deps, req, token }: BuildContext): AuthItem | undefined {
  // a YubiKey in HMAC challenge-response mode, imported as TOTP
  if (token.type !== "totp" || !token.serial.startsWith("UBOM")) return undefined;
  let challenge = req.challenge;
  if (challenge === undefined || challenge === "") {
    challenge = toHex(deps.random.bytes(LUKS_CHALLENGE_BYTES));
  }
  if (challenge.length > MAX_CHALLENGE || !/^([0-9a-fA-F]{2})*$/.test(challenge)) {
    throw new ParameterError('Cannot parse parameter "challenge": expected a hex string');
  }
  const item: AuthItem = { challenge };
  if (token.active) {
    const hash = (token.info.hashlib?.value ?? "sha1") as OtpHash;
    item.response = toHex(
      new Uint8Array(
        createHmac(hash, tokenSecret(deps, token)).update(fromHex(challenge)).digest(),
      ),
    );
  }
  return item;
}

async function buildItem(ctx: BuildContext): Promise<AuthItem | undefined> {
  switch (ctx.binding.application) {
    case "ssh":
      return sshItem(ctx);
    case "luks":
      return luksItem(ctx);
    case "offline":
      return await offlineItem(ctx.deps, ctx.token, ctx.binding.options, {
        password: ctx.req.challenge,
        userAgent: ctx.req.userAgent,
      });
    default:
      return undefined;
  }
}

/**
 * Authentication items of the tokens bound to `hostname` (or selected by a
 * `service_id` filter), grouped by application. Offline items consume HOTP
 * values. `{}` when nothing applies.
 */
export async function getAuthItems(
  deps: Deps,
  request: AuthItemRequest,
): Promise<Record<string, AuthItem[]>> {
  const req = request.mangle ? await mangled(deps, request, request.mangle) : request;
  const { bindings } = await selectBindings(deps, {
    hostname: req.hostname,
    application: req.application,
    serial: req.serial,
    filters: req.filters,
  });
  if (req.application) {
    // selectBindings treats "" as "all applications"; a path application is exact
    for (let i = bindings.length - 1; i >= 0; i--) {
      if (bindings[i].application !== req.application) bindings.splice(i, 1);
    }
  }
  const tokens = new Map<number, TokenWithInfo | undefined>();
  const out: Record<string, AuthItem[]> = {};
  for (const binding of bindings) {
    if (!tokens.has(binding.tokenId)) {
      tokens.set(binding.tokenId, await findTokenBySerial(deps, binding.serial));
    }
    const token = tokens.get(binding.tokenId);
    if (!token) continue;
    const item = await buildItem({ deps, req, token, binding });
    // the counter moved: later bindings of the same token need the fresh row
    if (binding.application === "offline") tokens.delete(binding.tokenId);
    if (!item || Object.keys(item).length === 0) continue;
    // [quirk] serial is the request's serial parameter, which the API never passes
    (out[binding.application] ??= []).push({ ...item, ...binding.options, serial: null });
  }
  return out;
}

/** The request after auth-scope `mangle` policies rewrote its parameters. */
async function mangled(
  deps: Deps,
  req: AuthItemRequest,
  ctx: MangleContext,
): Promise<AuthItemRequest> {
  const flat: Record<string, string> = { ...req.filters, hostname: req.hostname };
  if (req.challenge !== undefined) flat.challenge = req.challenge;
  if (req.serial !== undefined) flat.serial = req.serial;
  const { params } = await mangleParams(deps, flat, ctx);
  const { hostname, challenge, serial, ...filters } = params;
  return { ...req, hostname: hostname ?? req.hostname, challenge, serial, filters };
}
