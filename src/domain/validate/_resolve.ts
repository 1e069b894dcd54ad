/**
 * The objects a validate request is about, resolved once: the user, the
 * token of a serial with its realms, the policies matched on exactly these,
 * and the live owner of a token named by serial or transaction.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { ParameterError, ResourceNotFoundError } from "../../errors.ts";
import type { SystemConfig } from "../system_config/mod.ts";
import {
  findTokenBySerial,
  isOwner,
  TOKEN_NOT_FOUND_MESSAGE,
  type TokenWithInfo,
  type UserRef,
} from "../token/mod.ts";
import { currentUser, resolveUser, splitUser } from "../token/_users.ts";
import { validatePolicies } from "./policy.ts";
import { realmsOfToken } from "../token/token_store.ts";
import {
  type CheckContext,
  type CheckObjects,
  type CheckRequest,
  newCheckContext,
} from "./_context.ts";

/** The context of a request that acts for `token`'s owner (policies matched on both). */
export async function ownerContext(
  deps: Deps,
  system: SystemConfig,
  req: CheckRequest,
  token: TokenWithInfo,
): Promise<CheckContext> {
  const owner = token.owner;
  const policies = await validatePolicies(deps, {
    login: owner?.login ?? "",
    realm: owner?.realm ?? "",
    user: owner,
    resolver: owner?.resolver,
    serial: token.serial,
    token,
    clientIp: req.clientIp,
    userAgent: req.userAgent,
    request: req.conditions,
  });
  return newCheckContext(deps, {
    system,
    request: req,
    login: owner?.login ?? "",
    realm: owner?.realm ?? "",
    user: owner,
    token,
    policies,
  });
}

/**
 * The owner of a token a request names by serial or transaction, as the user
 * store has it now (one lookup): the user the request names, who must own
 * the token (else ParameterError), or else the stored owner found again.
 * Undefined when the owner is gone from the user store (or its resolver left
 * the realm): offboarding there ends the logins of the token too.
 */
export async function liveOwnerOf(
  deps: Deps,
  req: CheckRequest,
  token: TokenWithInfo,
): Promise<UserRef | undefined> {
  if (req.user) {
    const { login, realm } = await splitUser(deps, req.user, req.realm || undefined);
    const user = await resolveUser(deps, login, realm, req.resolver || undefined);
    if (!user || !isOwner(token, user)) {
      throw new ParameterError("Given serial does not belong to given user!");
    }
    return user;
  }
  const owner = token.owner && await currentUser(deps, token.owner);
  if (!owner) logOwnerGone(deps, token);
  return owner;
}

/** Logs why a token whose owner left the user store was refused (the client sees a plain failure). */
export function logOwnerGone(deps: Deps, token: TokenWithInfo): void {
  deps.log.info("The token's owner is no longer in the user store; the request is refused", {
    serial: token.serial,
    user: token.owner?.login,
    realm: token.owner?.realm,
    resolver: token.owner?.resolver,
  });
}

/**
 * The objects of a check request, resolved once before anything is decided:
 * the user (after `user@realm` splitting, default realm and `setrealm`), the
 * token of `serial`, and the policies matched on exactly these.
 */
export async function resolveCheck(
  deps: Deps,
  req: CheckRequest,
): Promise<Omit<CheckObjects, "system" | "request">> {
  const serial = req.serial ?? "";
  const userParam = req.user ?? "";
  let login = "";
  let realm = "";
  let user: UserRef | undefined;
  if (userParam !== "") {
    ({ login, realm } = await splitUser(deps, userParam, req.realm || undefined));
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
  }
  // loaded once: the policies of a serial-only request match on the token owner
  const token = serial !== "" ? await loadSerialToken(deps, serial) : undefined;
  // reads realm and user at call time: setrealm below changes both
  const policiesOfRequest = () =>
    validatePolicies(deps, {
      login,
      realm,
      user,
      resolver: user?.resolver ?? req.resolver,
      serial: serial || undefined,
      token,
      clientIp: req.clientIp,
      userAgent: req.userAgent,
      request: req.conditions,
    });
  let policies = await policiesOfRequest();
  if (policies.setrealm && userParam !== "" && policies.setrealm !== realm) {
    realm = policies.setrealm;
    user = await resolveUser(deps, login, realm, req.resolver || undefined);
    policies = await policiesOfRequest();
  }
  return { login, realm, user, token, policies };
}

/**
 * The token of `serial` (info, no realms); 404 when unknown. An ownerless
 * token comes with its realms: policies of a serial-only request match on
 * its first realm, and they read it from here instead of loading it again.
 */
export async function loadSerialToken(deps: Deps, serial: string): Promise<TokenWithInfo> {
  const token = await findTokenBySerial(deps, serial, { withRealms: false });
  if (!token) throw new ResourceNotFoundError(TOKEN_NOT_FOUND_MESSAGE);
  if (token.owner) return token;
  return { ...token, realms: await realmsOfToken(deps.db, token.id) };
}
