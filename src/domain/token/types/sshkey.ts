/**
 * `sshkey`: holds an SSH public key for the SSH machine application; never
 * authenticates through `/validate/check`.
 *
 * @module
 */
import { ParameterError, TokenAdminError } from "../../../errors.ts";
import { param } from "./_oath.ts";
import type { TokenType } from "./token_type.ts";

/** SSH key types the token accepts. */
export const SSH_KEY_TYPES: readonly string[] = [
  "ssh-rsa",
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "sk-ecdsa-sha2-nistp256@openssh.com",
  "sk-ssh-ed25519@openssh.com",
];

/** The `sshkey` type. */
export const SSHKEY: TokenType = {
  type: "sshkey",
  prefix: "SSHK",
  authenticates: false,
  challenge: false,
  init(ctx) {
    const raw = (param(ctx, "sshkey") ?? "").trim();
    if (raw === "") throw new ParameterError("Missing parameter: sshkey");
    if (raw.length > 16384) throw new ParameterError('Cannot parse parameter "sshkey": too long');
    const parts = raw.split(/\s+/);
    const [keyType, body] = parts;
    if (!SSH_KEY_TYPES.includes(keyType)) {
      throw new TokenAdminError("The keytype you specified is not supported.");
    }
    if (!body || !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) {
      throw new ParameterError('Cannot parse parameter "sshkey": invalid base64 key');
    }
    const comment = parts.slice(2).join(" ");
    return {
      otplen: 6,
      info: { ssh_type: keyType, ssh_comment: comment, tokenkind: "software" },
      secretInfo: { ssh_key: `${keyType} ${body}${comment ? " " + comment : ""}` },
    };
  },
  checkOtp() {
    return { isValid: false };
  },
};
