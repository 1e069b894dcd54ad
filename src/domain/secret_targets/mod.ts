/**
 * The one rule for a stored secret that Tessera sends somewhere (a resolver's
 * bind or service password, a RADIUS secret, an SMTP password, an SMS
 * gateway's token): it is kept (not sent again, or sent back as
 * `__CENSORED__`) only while every key that decides where it goes stays the
 * same. Otherwise an admin who may write a definition but cannot read its
 * secret could point the definition at a server of their own and receive the
 * secret there. Every definition kind names its targets and calls
 * {@link refuseMovedSecrets} on save and on its test endpoint.
 *
 * @module
 */
import { ParameterError } from "../../errors.ts";

/** Per secret key: the keys whose values decide where that secret is sent. */
export type SecretTargets = Readonly<Record<string, readonly string[]>>;

/**
 * Throws ParameterError (400) when a stored secret would be kept although a
 * key deciding where it is sent changes. `before` holds the stored values
 * (the secret's own entry only needs to be non-empty when one is stored),
 * `after` the values the definition would have; `isKept(secret)` says whether
 * the request keeps the stored secret instead of sending it again.
 */
export function refuseMovedSecrets(
  targets: SecretTargets | undefined,
  before: Readonly<Record<string, string | undefined>>,
  after: Readonly<Record<string, string | undefined>>,
  isKept: (secret: string) => boolean,
): void {
  for (const [secret, keys] of Object.entries(targets ?? {})) {
    if ((before[secret] ?? "") === "" || !isKept(secret)) continue;
    const changed = keys.filter((k) => (before[k] ?? "") !== (after[k] ?? ""));
    if (changed.length > 0) {
      const names = changed.map((k) => `"${k}"`).join(", ");
      throw new ParameterError(
        `Cannot keep the stored "${secret}": send "${secret}" again when you change ${names} ` +
          `(where it is sent)`,
      );
    }
  }
}
