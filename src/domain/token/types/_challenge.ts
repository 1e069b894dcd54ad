/**
 * Helpers of the types that make their own challenges (email, sms,
 * indexedsecret, question): `valid_until`, message tags (spec 11 §0.3),
 * the owner's attributes, positions drawn at random.
 *
 * @module
 */
import type { Random } from "../../../lib/random.ts";
import { getUserInfo } from "../_users.ts";
import type { UserRef } from "../model.ts";
import type { TypeChallengeContext } from "./token_type.ts";

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** Server local date `YYYY-MM-DD` of `ms`. */
function localDate(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Server local time `hh:mm:ss` of `ms`. */
function localTime(d: Date): string {
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * `valid_until` of a challenge: server local time in Python's `str(datetime)`
 * form `YYYY-MM-DD hh:mm:ss.ffffff` (spec 11 §0.2).
 */
export function validUntil(nowMs: number, seconds: number): string {
  const d = new Date(nowMs + seconds * 1000);
  return `${localDate(d)} ${localTime(d)}.${pad(d.getMilliseconds() * 1000, 6)}`;
}

/** A message text names a tag that does not exist (`{x}`), or its braces do not pair. */
export class MessageTagError extends Error {}

const FORMAT_REGEXP = /\{\{|\}\}|\{([^{}]*)\}|[{}]/g;

/**
 * Fills a message text (spec 11 §0.3): Python-format `{tag}` (also
 * `{tag!s}`, `{{`/`}}` for literal braces) and the legacy `<otp>`,
 * `<serial>`; `\,` is a literal comma. An unknown tag or a lone brace throws
 * {@link MessageTagError}, as Python's `format` does.
 */
export function renderMessage(text: string, tags: Readonly<Record<string, string>>): string {
  const legacy = text.replaceAll("\\,", ",")
    .replaceAll("<otp>", "{otp}")
    .replaceAll("<serial>", "{serial}");
  return legacy.replace(FORMAT_REGEXP, (match, name: string | undefined) => {
    if (match === "{{") return "{";
    if (match === "}}") return "}";
    if (name === undefined) throw new MessageTagError(`Single "${match}" in the message text`);
    const key = name.replace(/!s$/, "").trim();
    if (!Object.hasOwn(tags, key)) throw new MessageTagError(`Unknown tag "{${name}}"`);
    return tags[key];
  });
}

/** The owner's user-store attributes ({} without an owner or when the store fails). */
export async function ownerInfo(ctx: TypeChallengeContext): Promise<Record<string, string>> {
  const owner: UserRef | undefined = ctx.token.owner ?? ctx.user;
  if (!owner) return {};
  return await getUserInfo(ctx.deps, owner);
}

/** The first value of a user attribute (a list is stored as JSON or comma-separated). */
export function firstValue(value: string | undefined): string {
  const text = (value ?? "").trim();
  if (text.startsWith("[")) {
    try {
      const list = JSON.parse(text);
      if (Array.isArray(list)) return String(list[0] ?? "").trim();
    } catch { /* not a JSON list: the text itself */ }
  }
  return text;
}

/** The tag values of a challenge message about `ctx.token` with code `otp` (spec 11 §0.3). */
export function messageTags(
  ctx: TypeChallengeContext,
  info: Record<string, string>,
  otp: string,
): Record<string, string> {
  const owner = ctx.token.owner ?? ctx.user;
  const now = new Date(ctx.nowMs);
  return {
    otp,
    serial: ctx.token.serial,
    user: info.givenname ?? "",
    givenname: info.givenname ?? "",
    surname: info.surname ?? "",
    username: owner?.login ?? "",
    userrealm: owner?.realm ?? "",
    tokentype: ctx.token.type,
    recipient_givenname: info.givenname ?? "",
    recipient_surname: info.surname ?? "",
    time: localTime(now),
    date: localDate(now),
    challenge: "",
    admin: "",
    realm: "",
    action: "",
    url: "",
    client_ip: "",
    ua_browser: "",
    ua_string: "",
  };
}

/** A uniform random integer in `1 … max` (rejection-sampled from 32-bit values). */
export function randomPosition(random: Random, max: number): number {
  const limit = Math.floor(0x100000000 / max) * max;
  for (;;) {
    const b = random.bytes(4);
    const n = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
    if (n < limit) return (n % max) + 1;
  }
}

/** An integer policy value in `min … max`, or `fallback`. */
export function intPolicy(value: string | undefined, fallback: number, min: number, max: number) {
  const n = Number.parseInt(value ?? "", 10);
  return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}
