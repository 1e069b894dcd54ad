/**
 * The one place where enrolment reads admin/user policy (`verify_enrollment`,
 * `<type>_2step`). Until the policy engine wires it (issue #5) it returns
 * privacyIDEA's defaults (no verification, two-step dropped); tests inject
 * values per `deps` with {@link setEnrollPolicyOverride}.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import type { UserRef } from "./model.ts";

/** Who enrols what (policy match context). */
export interface EnrollPolicyContext {
  type: string;
  /** The owner of the new token, if any. */
  user?: UserRef;
  realm?: string;
  caller?: { role: "admin" | "user"; username: string; realm: string };
}

/** Enrolment policy values. */
export interface EnrollPolicies {
  /** `verify_enrollment`: token types whose first OTP must be verified. */
  verifyEnrollment: string[];
  /** `<type>_2step` for this type. */
  twoStep: "none" | "allow" | "force";
  /** `<type>_2step_clientsize`, `_serversize`, `_difficulty`. */
  twoStepClientSize: number;
  twoStepDifficulty: number;
}

/** No policy: no verification, no two-step enrolment. */
export const DEFAULT_ENROLL_POLICIES: Readonly<EnrollPolicies> = Object.freeze({
  verifyEnrollment: [],
  twoStep: "none",
  twoStepClientSize: 8,
  twoStepDifficulty: 10000,
});

/** An injected policy source. */
export type EnrollPolicyOverride =
  | Partial<EnrollPolicies>
  | ((ctx: EnrollPolicyContext) => Partial<EnrollPolicies> | Promise<Partial<EnrollPolicies>>);

const overrides = new WeakMap<Deps, EnrollPolicyOverride>();

/** Injects enrolment policy values for one `deps` (undefined removes them). */
export function setEnrollPolicyOverride(
  deps: Deps,
  override: EnrollPolicyOverride | undefined,
): void {
  if (override === undefined) overrides.delete(deps);
  else overrides.set(deps, override);
}

/** The enrolment policies that apply to `ctx`. */
export async function enrollPolicies(
  deps: Deps,
  ctx: EnrollPolicyContext,
): Promise<EnrollPolicies> {
  // TODO(#5): read verify_enrollment and <type>_2step* from the admin/user scope
  const override = overrides.get(deps);
  if (override === undefined) return DEFAULT_ENROLL_POLICIES as EnrollPolicies;
  const values = typeof override === "function" ? await override(ctx) : override;
  return { ...DEFAULT_ENROLL_POLICIES, ...values };
}
