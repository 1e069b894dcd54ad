/**
 * A password inside a stored URL (`https://user:secret@host/path`): shown as
 * `https://user:__CENSORED__@host/path`, and sent back that way it keeps the
 * stored password only while the URL's target (scheme, host, port, path)
 * stays the same, by the rule of {@link refuseMovedSecrets}.
 *
 * @module
 */
import { ParameterError } from "../../errors.ts";
import { CENSORED } from "../../lib/crypto.ts";
import { refuseMovedSecrets } from "./mod.ts";

// scheme://userinfo@ — the authority ends at the first / ? # or \ (WHATWG
// treats \ as / in http URLs); the userinfo ends at its last @
const USERINFO_REGEXP = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#\\]*)@/;

interface Userinfo {
  prefix: string;
  user: string;
  password: string | undefined;
  rest: string;
}

function splitUserinfo(value: string): Userinfo | undefined {
  const m = value.match(USERINFO_REGEXP);
  if (!m) return undefined;
  const colon = m[2].indexOf(":");
  return {
    prefix: m[1],
    user: colon < 0 ? m[2] : m[2].slice(0, colon),
    password: colon < 0 ? undefined : m[2].slice(colon + 1),
    rest: value.slice(m[0].length),
  };
}

function join(u: Userinfo, password: string): string {
  return `${u.prefix}${u.user}:${password}@${u.rest}`;
}

/** The value with a URL password replaced by `__CENSORED__` (user name kept); others unchanged. */
export function censorUrlPassword(value: string): string {
  const u = splitUserinfo(value);
  if (!u || u.password === undefined || u.password === "") return value;
  return join(u, CENSORED);
}

/** True when the value is a URL whose password is `__CENSORED__`. */
export function hasCensoredUrlPassword(value: string): boolean {
  return splitUserinfo(value)?.password === CENSORED;
}

function target(value: string): Record<string, string> {
  try {
    const url = new URL(value);
    return { scheme: url.protocol, host: url.hostname, port: url.port, path: url.pathname };
  } catch {
    // not a URL: compared as a whole
    return { scheme: value, host: "", port: "", path: "" };
  }
}

/**
 * The URL `sent` with its `__CENSORED__` password replaced by the one in
 * `stored`; `name` names the parameter in errors. Throws ParameterError (400)
 * when no password is stored or the URL's scheme, host, port or path changed.
 * A value without the placeholder is returned as it is.
 */
export function keepUrlPassword(name: string, sent: string, stored: string | undefined): string {
  const u = splitUserinfo(sent);
  if (u?.password !== CENSORED) return sent;
  const old = stored === undefined ? undefined : splitUserinfo(stored);
  if (old?.password === undefined || old.password === "") {
    throw new ParameterError(
      `Cannot keep the stored password of "${name}": none is stored, send the password`,
    );
  }
  refuseMovedSecrets(
    { [`${name} password`]: ["scheme", "host", "port", "path"] },
    { ...target(stored!), [`${name} password`]: "stored" },
    target(sent),
    () => true,
  );
  return join(u, old.password);
}
