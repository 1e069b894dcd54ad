/**
 * Copying a token's PIN or owner to another token (`/token/copypin`, `/token/copyuser`;
 * spec 14 §18), e.g. for a replacement token.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import type { TokenWithInfo } from "./model.ts";
import { requireUnlocked } from "./_common.ts";
import * as store from "./token_store.ts";

/**
 * Gives `to` the stored PIN of `from` as it is stored (hash or encrypted form; an empty PIN
 * too), so the same PIN works with it; the PIN itself is never read.
 */
export async function copyTokenPin(
  deps: Deps,
  from: TokenWithInfo,
  to: TokenWithInfo,
): Promise<true> {
  requireUnlocked([to]);
  await store.updateToken(deps.db, to.id, { pin_hash: from.pinHash });
  return true;
}

/**
 * Makes `from`'s owner the owner of `to` and `from`'s realms its realms, in one transaction;
 * `to` loses its former owner, PIN and fail counter as an unassign does (privacyIDEA's
 * copy_token_user). `from` without an owner is refused (privacyIDEA fails with 500).
 */
export async function copyTokenUser(
  deps: Deps,
  from: TokenWithInfo,
  to: TokenWithInfo,
): Promise<true> {
  requireUnlocked([to]);
  const owner = from.owner;
  if (!owner) throw new AppError(`The token ${from.serial} has no user to copy.`, 10);
  await deps.db.transaction().execute(async (trx) => {
    await store.updateToken(trx, to.id, {
      user_id: owner.uid,
      user_login: owner.login,
      user_realm: owner.realm,
      resolver: owner.resolver,
      pin_hash: "",
      failcount: 0,
    });
    await store.replaceRealms(trx, to.id, from.realms);
  });
  return true;
}
