/**
 * The tokens a container template describes, enrolled into a new container
 * (privacyIDEA's `create_container_tokens_from_template`): by `/container/init`
 * with a template and by a login that creates a smartphone container
 * (`enroll_via_multichallenge=smartphone` with `enroll_via_multichallenge_template`).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { type Caller, checkRight, type RightContext } from "../policy/mod.ts";
import { initToken, type UserRef } from "../token/mod.ts";
import { addNewTokenToContainer, checkContainerTokenType, type Container } from "./mod.ts";

// template parameters that are secrets: used to enrol, never echoed in `init_params`
const SECRET_INIT_PARAMS = new Set(["pin", "otpkey", "password", "genkey_secret"]);

/** Who enrols the template's tokens and from where. */
export interface TemplateEnrolment {
  caller: Caller;
  /** A user caller's own user (their tokens are always theirs). */
  callerUser?: UserRef;
  client: string;
  userAgent: string;
  /** The policy set the request decides with. */
  policies?: RightContext["policies"];
}

/**
 * Enrols a template's tokens into a new container: each with the caller's
 * `enroll<TYPE>` right and the enrolment policies for its owner (a token with
 * `user: true` belongs to the container's owner, else to nobody, else into the
 * container's first realm; a user's tokens are always theirs). A token that is
 * refused or fails is skipped. `{<serial>: {type, ...detail, init_params}}`.
 */
export async function enrolTemplateTokens(
  deps: Deps,
  container: Container,
  templateTokens: unknown[],
  by: TemplateEnrolment,
): Promise<Record<string, unknown>> {
  const { caller } = by;
  const result: Record<string, unknown> = {};
  for (const raw of templateTokens) {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) continue;
    const { user: wantsOwner, ...rest } = raw as Record<string, unknown>;
    delete rest.realm;
    delete rest.resolver;
    delete rest.serial;
    const type = String(rest.type ?? "hotp").toLowerCase();
    let owner = caller.role === "user" ? by.callerUser : undefined;
    let realm: string | undefined;
    if (caller.role === "admin" && wantsOwner === true) {
      owner = container.owner;
      if (!owner) realm = container.realms[0];
    }
    const context = owner
      ? { user: owner.login, realm: owner.realm, resolver: owner.resolver }
      : { realm: realm ?? [] };
    const base = { client: by.client, userAgent: by.userAgent };
    try {
      // the right /token/init asks for this type, matched on the token's owner (or realm)
      await checkRight(deps, caller, `enroll${type.toUpperCase()}`, {
        ...base,
        ...(caller.role === "admin" ? context : {}),
        policies: by.policies,
      });
      checkContainerTokenType(container, type);
      const { role, username, realm: callerRealm, resolver } = caller;
      const res = await initToken(deps, { ...rest, type }, {
        user: owner,
        realm: owner ? undefined : realm,
        caller: { role, username, realm: callerRealm },
        client: by.client,
        pinPolicy: {
          caller: { role, username, realm: callerRealm, resolver },
          context: { ...base, ...context },
        },
      });
      await addNewTokenToContainer(deps, container, res.serial);
      const initParams = Object.fromEntries(
        Object.entries({ ...rest, type }).filter(([k]) => !SECRET_INIT_PARAMS.has(k)),
      );
      result[res.serial] = { type: res.type, ...res.detail, init_params: initParams };
    } catch (err) {
      // as privacyIDEA: a template token that is refused or fails is left out, the rest go on
      if (!(err instanceof AppError)) throw err;
      deps.log.info(
        `container ${container.serial}: template token of type ${type} not enrolled: ${err.message}`,
      );
    }
  }
  return result;
}
