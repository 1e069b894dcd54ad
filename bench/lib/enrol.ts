/**
 * Enrols the benchmark's users and tokens through the API, exactly as an
 * administrator would: an editable sqlresolver, a realm, users via /user/,
 * tokens via /token/init (otpkey, pin, user, realm).
 *
 * @module
 */
import { type Api, mapLimit } from "./api.ts";
import { benchKey, toHex, wrongOtp } from "./otp.ts";

/** A user with one HOTP token whose key the benchmark knows. */
export interface OtpUser {
  login: string;
  serial: string;
  key: Uint8Array;
  pin: string;
  /** Next HOTP counter not sent yet. */
  next: number;
  /** For wrong-OTP users: the fixed wrong OTP. */
  wrong?: string;
}

/** What was enrolled. */
export interface Enrolment {
  realm: string;
  /** Validate requests name the user (true) or, without the users API, the serial. */
  byUser: boolean;
  hotp: OtpUser[];
  wrong: OtpUser[];
  spass: OtpUser[];
  unknown: string[];
  /** Tokens in the database after enrolment (GET /token/ count). */
  tokensInDb: number;
  notes: string[];
}

/** Realm and resolver the benchmark creates. */
export const REALM = "bench";
export const RESOLVER = "benchusers";
/** HOTP counter window of the tokens (server default). */
export const COUNT_WINDOW = 10;
/** Fail limit of the wrong-OTP tokens: never reached in a run. */
export const HUGE_MAXFAIL = 1_000_000_000;

const PIN = "4711";
const PARALLEL = 8;

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** The users (login, serial, key) of one validate scenario; pure. */
export function planUsers(prefix: string, count: number): OtpUser[] {
  return Array.from({ length: count }, (_, i) => ({
    login: `${prefix}${pad(i + 1, 5)}`,
    serial: `B${prefix.toUpperCase()}${pad(i + 1, 5)}`,
    key: benchKey(prefix, i),
    pin: PIN,
    next: 0,
  }));
}

/**
 * Moves each user's counter past the OTPs a run used (`used`: 1-based item
 * index → count, as the Lua script reports it); returns the total.
 */
export function advanceUsers(users: OtpUser[], used: Record<string, number>): number {
  let total = 0;
  for (const [index, n] of Object.entries(used)) {
    const u = users[Number(index) - 1];
    if (!u) throw new Error(`wrk reported item ${index}, but there are ${users.length} users`);
    u.next += n;
    total += n;
  }
  return total;
}

/** The urlencoded /validate/check body of `u` without the OTP part; pure. */
export function validateBody(u: OtpUser, byUser: boolean, realm = REALM): string {
  const who = byUser
    ? `user=${encodeURIComponent(u.login)}&realm=${encodeURIComponent(realm)}`
    : `serial=${encodeURIComponent(u.serial)}`;
  return `${who}&pass=${encodeURIComponent(u.pin)}`;
}

/**
 * Enrols `users` users per validate scenario and fills up to `tokens` tokens.
 * Without the users API it enrols unassigned tokens and validates by serial.
 */
export async function enrol(
  api: Api,
  options: {
    users: number;
    tokens: number;
    progress: (msg: string) => void;
    /**
     * SQLite file of the bench users (default "bench-users.sqlite", under the
     * data directory); an absolute path shared by several nodes.
     */
    usersDatabase?: string;
  },
): Promise<Enrolment> {
  const { users, progress } = options;
  const notes: string[] = [];
  const e: Enrolment = {
    realm: REALM,
    byUser: true,
    hotp: planUsers("h", users),
    wrong: planUsers("w", users),
    spass: planUsers("s", users),
    unknown: Array.from({ length: Math.max(users, 1) }, (_, i) => `nobody${pad(i + 1, 5)}`),
    tokensInDb: 0,
    notes,
  };
  for (const u of e.spass) u.pin = `spass-${u.login}`;

  try {
    await api.call("POST", `/resolver/${RESOLVER}`, {
      type: "sqlresolver",
      Driver: "sqlite",
      Database: options.usersDatabase ?? "bench-users.sqlite",
      Table: "users",
      Map: JSON.stringify({
        userid: "id",
        username: "username",
        password: "password",
        email: "email",
        givenname: "givenname",
        surname: "surname",
      }),
      Editable: "1",
    });
    await api.call("POST", `/realm/${REALM}`, { resolvers: RESOLVER });
    const all = [...e.hotp, ...e.wrong, ...e.spass];
    progress(`creating ${all.length} users through /user/`);
    await mapLimit(all, PARALLEL, (u) =>
      api.call("POST", "/user/", {
        user: u.login,
        resolver: RESOLVER,
        password: `pw-${u.login}`,
        email: `${u.login}@bench.example`,
        givenname: u.login,
        surname: "Bench",
      }));
  } catch (err) {
    e.byUser = false;
    notes.push(
      `users API not usable (${
        (err as Error).message.slice(0, 160)
      }): tokens enrolled unassigned, validate by serial, unknown-user scenario skipped`,
    );
  }

  const owner = (u: OtpUser): Record<string, string> =>
    e.byUser ? { user: u.login, realm: REALM } : {};
  progress(`enrolling ${users * 3} user tokens through /token/init`);
  await mapLimit([...e.hotp, ...e.wrong], PARALLEL, (u) =>
    api.call("POST", "/token/init", {
      type: "hotp",
      serial: u.serial,
      otpkey: toHex(u.key),
      pin: u.pin,
      ...owner(u),
    }));
  await mapLimit(
    e.spass,
    PARALLEL,
    (u) =>
      api.call("POST", "/token/init", { type: "spass", serial: u.serial, pin: u.pin, ...owner(u) }),
  );
  await mapLimit(e.wrong, PARALLEL, async (u) => {
    await api.call("POST", "/token/set", { serial: u.serial, max_failcount: HUGE_MAXFAIL });
    u.wrong = wrongOtp(u.key, 0, COUNT_WINDOW * 2);
  });

  const have = await tokenCount(api);
  const fill = Math.max(0, options.tokens - have);
  if (fill > 0) {
    progress(`enrolling ${fill} more tokens (HOTP/TOTP, unassigned) to reach ${options.tokens}`);
    const started = performance.now();
    const seq = Array.from({ length: fill }, (_, i) => i + 1);
    await mapLimit(seq, PARALLEL, (i) =>
      api.call("POST", "/token/init", {
        type: i % 2 === 0 ? "totp" : "hotp",
        serial: `BF${pad(i, 6)}`,
        otpkey: toHex(benchKey("fill", i)),
        description: `bench filler ${i}`,
      }));
    progress(
      `  ${fill} tokens in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  e.tokensInDb = await tokenCount(api);
  return e;
}

/** Number of tokens the admin sees (GET /token/ count). */
export async function tokenCount(api: Api): Promise<number> {
  const value = await api.call("GET", "/token/", { pagesize: 1 });
  return Number(value.count);
}

/** Fail counters of the tokens whose serial starts with `prefix`, by serial. */
export async function failCounts(api: Api, prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let page = 1;; page++) {
    const value = await api.call("GET", "/token/", {
      serial: `${prefix}*`,
      pagesize: 100,
      page,
    });
    for (const t of value.tokens) out.set(t.serial, Number(t.failcount));
    if (!value.next) break;
  }
  return out;
}
