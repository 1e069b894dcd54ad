/**
 * `/validate/samlcheck` (spec 02 §8): the check's answer with the user's
 * attributes.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { loadSystemConfig } from "../system_config/mod.ts";
import { getUserInfo } from "../token/_users.ts";
import type { CheckRequest, CheckResult } from "./_context.ts";
import { validateCheck } from "./_check.ts";

/** `/validate/samlcheck`: `{auth, attributes}` (spec 02 §8). */
export async function samlCheck(
  deps: Deps,
  req: CheckRequest,
): Promise<{ value: { auth: boolean; attributes: Record<string, unknown> }; result: CheckResult }> {
  const result = await validateCheck(deps, req);
  const system = await loadSystemConfig(deps);
  let attributes: Record<string, unknown> = {};
  const wants = system.bool("ReturnSamlAttributes") &&
    (result.value || system.bool("ReturnSamlAttributesOnFail"));
  if (wants && result.user) {
    const info = await getUserInfo(deps, result.user);
    const { password: _pw, ...rest } = info;
    attributes = {
      ...rest,
      username: result.user.login,
      realm: result.user.realm,
      resolver: result.user.resolver,
      email: info.email ?? "",
      surname: info.surname ?? "",
      givenname: info.givenname ?? "",
      mobile: info.mobile ?? "",
      phone: info.phone ?? "",
    };
  }
  return { value: { auth: result.value, attributes }, result };
}
