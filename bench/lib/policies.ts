/**
 * The 50 policies of the "policies" scenario and bench/policy_overhead.ts:
 * 20 authentication and 15 authorization policies that match a validate
 * request without changing its outcome or the work it does, and 15 in other
 * scopes (pure: no I/O).
 *
 * @module
 */

/** 50 policies; those in the validate scopes match a successful spass check of BENCH1. */
export function benchPolicies(): Record<string, string | number>[] {
  const out: Record<string, string | number>[] = [];
  const authn = [
    "otppin=tokenpin",
    "challenge_response=hotp totp",
    "challenge_text=please enter otp\\, now",
    "passOnNoUser",
    "preferred_client_mode=interactive poll",
  ];
  for (let i = 0; i < 20; i++) {
    out.push({
      scope: "authentication",
      action: authn[i % authn.length],
      realm: i % 3 === 0 ? "" : "*",
      user: i % 4 === 0 ? "*, -root" : "",
      client: i % 2 === 0 ? "127.0.0.0/8, 10.0.0.0/8, -10.1.1.1" : "",
      time: i % 5 === 0 ? "Mon-Sun: 0-23:59" : "",
      priority: 1 + (i % 3),
    });
  }
  const authz = [
    "tokentype=spass hotp totp",
    "serial=.*",
    "no_detail_on_fail",
    "add_resolver_in_response",
  ];
  for (let i = 0; i < 15; i++) {
    out.push({
      scope: "authorization",
      action: authz[i % authz.length],
      client: i % 2 === 0 ? "127.0.0.1, ::1, 10.0.0.0/8" : "",
      priority: 1 + (i % 2),
    });
  }
  const other: [string, string][] = [
    ["webui", "login_mode=userstore"],
    ["enrollment", "max_token_per_user=5"],
    ["user", "enable, disable"],
  ];
  for (let i = 0; i < 15; i++) {
    const [scope, action] = other[i % other.length];
    out.push({ scope, action, priority: 1 + i });
  }
  return out;
}
