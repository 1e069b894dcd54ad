/**
 * `GET /token/getserial/<otp>`: which token produced an OTP.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { tokenTypeOf } from "./types/mod.ts";
import * as store from "./token_store.ts";
import { checkContext } from "./secrets.ts";

/** Options of {@link getSerialByOtp}. */
export interface SerialSearch {
  type?: string;
  /** Substring of the serial. */
  serial?: string;
  assigned?: boolean;
  unassigned?: boolean;
  /** Only count the tokens that would be checked. */
  countOnly?: boolean;
  window?: number;
  /** Only tokens of these realms (token realm or owner realm): a realm-limited admin. */
  realms?: string[];
}

const MAX_SERIAL_SEARCH = 10_000;

/** `GET /token/getserial/<otp>`: the serial of the token that produced `otp`. */
export async function getSerialByOtp(
  deps: Deps,
  otp: string,
  search: SerialSearch = {},
): Promise<{ serial: string; count: number }> {
  const filter: store.TokenListFilter = {};
  if (search.type) filter.type = search.type.toLowerCase();
  if (search.serial) filter.serial = `*${search.serial}*`;
  if (search.assigned) filter.assigned = true;
  if (search.unassigned) filter.assigned = false;
  if (search.realms) filter.allowedRealms = search.realms;
  const { tokens, total } = await store.listTokens(deps.db, filter, {
    sortby: "serial",
    desc: false,
    offset: 0,
    limit: MAX_SERIAL_SEARCH,
  });
  if (search.countOnly) return { serial: "", count: total };
  const system = await loadSystemConfig(deps);
  const window = search.window ?? 10;
  let checked = 0;
  for (const t of await store.withInfo(deps.db, tokens, false)) {
    const module = tokenTypeOf(t.type);
    if (!module || !module.authenticates || module.pinOnly || t.keyEnc === "") continue;
    if (module.type !== "hotp" && module.type !== "totp" && module.type !== "paper") continue;
    checked++;
    const ctx = checkContext(deps, system, { ...t, countWindow: window });
    // checkOtp only computes; nothing is written here
    if ((await module.checkOtp(ctx, otp)).isValid) return { serial: t.serial, count: checked };
  }
  return { serial: "", count: checked };
}
