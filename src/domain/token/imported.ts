/**
 * Tokens that come from elsewhere (token files, a privacyIDEA database):
 * written with every field given, in the caller's transaction.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { TokenAdminError } from "../../errors.ts";
import { encryptSecret } from "../../lib/crypto.ts";
import type { InfoEntry, UserRef } from "./model.ts";
import * as store from "./token_store.ts";

/** A token as imported: every column, info in clear (encrypted here when `type` is "password"). */
export interface ImportedToken {
  serial: string;
  type: string;
  description: string;
  /** The secret; undefined for types without one. */
  secret?: Uint8Array;
  /** The stored PIN form (Tessera's, "" or an imported hash, see pin.ts). */
  pinHash: string;
  active: boolean;
  revoked: boolean;
  locked: boolean;
  failcount: number;
  maxfail: number;
  count: number;
  countWindow: number;
  syncWindow: number;
  otplen: number;
  rolloutState: string;
  owner?: UserRef;
  info: Record<string, InfoEntry>;
  realms: string[];
  createdAt: number;
}

/** What {@link writeImportedToken} did. */
export type ImportOutcome = "created" | "replaced" | "reinitialised" | "exists";

/**
 * Writes an imported token on `deps.db` (run it inside the caller's
 * transaction). An existing serial is left alone (`exists`), replaced whole
 * (`replace`), or re-initialised as `/token/load` does (`reinit`: new key,
 * counter, description and info; owner and PIN stay; same type only).
 */
export async function writeImportedToken(
  deps: Deps,
  t: ImportedToken,
  options: { onExisting: "skip" | "replace" | "reinit" },
): Promise<ImportOutcome> {
  const existing = await store.findBySerial(deps.db, t.serial);
  const info: Record<string, InfoEntry> = {};
  for (const [k, e] of Object.entries(t.info)) {
    info[k] = e.type === "password"
      ? { value: encryptSecret(deps.keys.token, e.value, deps.random), type: "password" }
      : e;
  }
  const keyEnc = t.secret && t.secret.length > 0
    ? encryptSecret(deps.keys.token, t.secret, deps.random)
    : "";
  if (existing && options.onExisting === "skip") return "exists";
  if (existing && options.onExisting === "reinit") {
    if (existing.type !== t.type) {
      throw new TokenAdminError(
        `init token failed: Token ${t.serial} already exists with type ${existing.type}. Can not initialize token with new type ${t.type}`,
      );
    }
    if (existing.locked) {
      throw new TokenAdminError("This action is not possible, since the token is locked", 1007);
    }
    await store.updateToken(deps.db, existing.id, {
      key_enc: keyEnc,
      count: t.count,
      otplen: t.otplen,
      failcount: 0,
      description: t.description,
      rollout_state: t.rolloutState,
    });
    await store.setInfo(deps.db, existing.id, info);
    for (const realm of t.realms) await store.addRealm(deps.db, existing.id, realm);
    return "reinitialised";
  }
  const fields = {
    serial: t.serial,
    tokentype: t.type,
    description: t.description,
    key_enc: keyEnc,
    pin_hash: t.pinHash,
    active: t.active ? 1 : 0,
    revoked: t.revoked ? 1 : 0,
    locked: t.locked ? 1 : 0,
    failcount: t.failcount,
    maxfail: t.maxfail,
    count: t.count,
    count_window: t.countWindow,
    sync_window: t.syncWindow,
    otplen: t.otplen,
    rollout_state: t.rolloutState,
    user_id: t.owner?.uid ?? "",
    resolver: t.owner?.resolver ?? "",
    user_realm: t.owner?.realm ?? "",
    user_login: t.owner?.login ?? "",
    created_at: t.createdAt,
  };
  const realms = [...new Set([...t.realms, ...(t.owner?.realm ? [t.owner.realm] : [])])].sort();
  let id: number;
  if (existing) {
    id = existing.id;
    await store.updateToken(deps.db, id, fields);
    const old = await store.infoOf(deps.db, [id]);
    await store.deleteInfo(deps.db, id, Object.keys(old.get(id) ?? {}));
  } else {
    id = await store.insertToken(deps.db, fields);
  }
  await store.setInfo(deps.db, id, info);
  await store.replaceRealms(deps.db, id, realms);
  return existing ? "replaced" : "created";
}
