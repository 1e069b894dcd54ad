/**
 * `api_key_required` (authorization): the validate JWT a request must bring
 * before anything is looked up, matched on the user the request names.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { PolicyError } from "../../errors.ts";
import type { UserRef } from "../token/mod.ts";
import { resolveUser, splitUser } from "../token/_users.ts";
import { mayRequireApiKey, type ValidatePolicies, validatePolicies } from "./policy.ts";
import type { ApiKeyCheck, CheckRequest } from "./_context.ts";
import type { ConditionData } from "../policy/mod.ts";

/**
 * `api_key_required` (authorization): refuses a request without a valid
 * validate JWT with privacyIDEA's messages.
 */
export async function requireApiKey(
  policies: ValidatePolicies,
  apiKey?: ApiKeyCheck,
): Promise<void> {
  if (!policies.isApiKeyRequired || !apiKey) return;
  const status = await apiKey();
  if (status === "invalid") throw new PolicyError("No valid API key was passed.");
  if (status === "not-api-key") {
    throw new PolicyError("A correct JWT was passed, but it was no API key.");
  }
}

/**
 * `api_key_required` for a validate request that names no user (e.g.
 * `/validate/polltransaction`): the policies are matched without a user.
 */
export async function requireValidateApiKey(
  deps: Deps,
  req: { clientIp: string; userAgent: string; apiKey: ApiKeyCheck; conditions?: ConditionData },
): Promise<void> {
  if (!(await mayRequireApiKey(deps))) return;
  const policies = await validatePolicies(deps, {
    login: "",
    realm: "",
    clientIp: req.clientIp,
    userAgent: req.userAgent,
    request: req.conditions,
  });
  await requireApiKey(policies, req.apiKey);
}

/**
 * `api_key_required` for the requests that go the FIDO way (an assertion, a
 * passkey registration, a cancelled enrolment): matched on the user they
 * name, if any, before anything is looked up or changed.
 */
export async function requireApiKeyOfFidoRequest(deps: Deps, req: CheckRequest): Promise<void> {
  if (!req.apiKey || !(await mayRequireApiKey(deps))) return;
  let login = "";
  let realm = "";
  let user: UserRef | undefined;
  if (req.user) {
    ({ login, realm } = await splitUser(deps, req.user, req.realm || undefined));
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
  }
  const policies = await validatePolicies(deps, {
    login,
    realm,
    user,
    resolver: user?.resolver ?? req.resolver,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
    request: req.conditions,
  });
  await requireApiKey(policies, req.apiKey);
}
