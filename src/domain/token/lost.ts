/**
 * A lost token (`POST /token/lost/<serial>`): a temporary password token for the owner.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError, ResourceNotFoundError, TokenAdminError } from "../../errors.ts";
import { encryptSecret } from "../../lib/crypto.ts";
import { generatePassword, lostTokenPool } from "../../lib/char_policy.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import type { ConditionData } from "../policy/mod.ts";
import type { Token, UserRef } from "./model.ts";
import { lostTokenSettings } from "./enroll_policy.ts";
import * as store from "./token_store.ts";
import { isUniqueViolation, MAX_DESCRIPTION, newTokenRow, plainInfo } from "./_common.ts";
import { nowIso, validityStamp } from "./dates.ts";
import { isOwner, TOKEN_NOT_FOUND_MESSAGE } from "./lookup.ts";

/**
 * `POST /token/lost/<serial>`: a temporary `pw` token `lost<serial>` for the
 * owner with the same PIN; the original is disabled. Password length and
 * characters and the days it is valid come from the enrollment policies
 * `losttoken_PW_length` (16), `losttoken_PW_contents` (`8`: Base58) and
 * `losttoken_valid` (10), matched on the owner.
 */
export async function lostToken(
  deps: Deps,
  t: Token,
  options: { user?: UserRef; client?: string; conditions?: ConditionData } = {},
): Promise<Record<string, unknown>> {
  const serial = t.serial;
  if (options.user && !isOwner(t, options.user)) {
    throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  }
  if (!t.owner) {
    throw new TokenAdminError("You can only define a lost token for an assigned token.", 2012);
  }
  const newSerial = `lost${serial}`.slice(0, 40);
  const settings = await lostTokenSettings(deps, {
    user: t.owner,
    client: options.client,
    conditions: options.conditions,
  });
  const pool = lostTokenPool(settings.contents);
  if (pool === "") {
    // privacyIDEA fails with an unexpected error on such a value
    throw new PolicyError(
      `The policy action "losttoken_PW_contents" names no character set (c, C, n, s, 8): "${settings.contents}"`,
    );
  }
  const password = generatePassword(deps.random, settings.length, pool);
  const end = deps.clock.now() + settings.validDays * 86_400_000;
  const endDate = validityStamp(end);
  const system = await loadSystemConfig(deps);
  try {
    await deps.db.transaction().execute(async (trx) => {
      const id = await store.insertToken(
        trx,
        newTokenRow(system, newSerial, "pw", deps.clock.now(), {
          description: `temporary replacement for ${serial}`.slice(0, MAX_DESCRIPTION),
          key_enc: encryptSecret(deps.keys.token, password, deps.random),
          // the owner keeps his PIN
          pin_hash: t.pinHash,
          otplen: password.length,
          rollout_state: "enrolled",
          user_id: t.owner!.uid,
          resolver: t.owner!.resolver,
          user_realm: t.owner!.realm,
          user_login: t.owner!.login,
        }),
      );
      await store.setInfo(
        trx,
        id,
        plainInfo({
          tokenkind: "software",
          creation_date: nowIso(deps.clock.now()),
          validity_period_end: endDate,
        }),
      );
      if (t.owner!.realm) await store.addRealm(trx, id, t.owner!.realm);
      await store.updateToken(trx, t.id, { active: 0 });
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new TokenAdminError(`Cannot create the lost token "${newSerial}": it already exists`);
    }
    throw err;
  }
  return {
    serial: newSerial,
    init: true,
    user: true,
    pin: true,
    password,
    end_date: endDate,
    valid_to: "xxxx",
    disable: t.active ? 1 : 0,
  };
}
