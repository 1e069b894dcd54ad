/**
 * A privacyIDEA installation built by the tests from spec 12's formats and
 * test vectors: its database (SQLite file, a PostgreSQL database or a
 * MariaDB/MySQL database) with the tables of §4, and its `encKey` (bytes
 * 00…5f, §6). The schema is privacyIDEA 3.12's, or with `version: "3.13"`
 * 3.13's (spec 17 §4: the new SMTP columns, a BIGINT audit id with a wider
 * signature, a description row without text, JSON challenge data).
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { createCipheriv } from "node:crypto";
import { Buffer } from "node:buffer";
import pg from "pg";
import mysql from "mysql2/promise";
import { argon2id } from "hash-wasm";
import type { MariaDb } from "../mariadb_server.ts";

/** The test encKey: bytes 00 01 … 5f. */
export const ENC_KEY = Uint8Array.from({ length: 96 }, (_, i) => i);
/** RFC 4226 secret as hex (T1). */
export const SEED_HEX = "3132333435363738393031323334353637383930";
/** T1: the secret encrypted with slot 0 under IV a0…af. */
export const T1 = {
  iv: "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
  enc:
    "d3c815fdc50176b782e5d858a7b0fad300ccd45ddf565e066e3872dfd299f4c84ec634f83ff1963f8eea464076cbd820",
};
/** T2: the same secret with the legacy padding. */
export const T2_ENC =
  "f199b35838d4215af26473a239ec9bad20d39de0149288f49086e5f951f2e9d49e0f0e024f49916e2f3d631eaca90db60b966d43bbcf1d5266608795b8a0ec4938f67a1f34aa74896a1183cb4497de61e572801837f531f89057fc6675786553";
/** T3: `Passw0rd!` as a slot-1 password. */
export const T3 = "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf:196934bc2dd6d9126ff86bc06cce7323";
/** T4: PIN `1234` encrypted (slot 0). */
export const T4 = "@@c0c1c2c3c4c5c6c7c8c9cacbcccdcecf:41e2fa5d9c7119e71c0658a243841b4c";
/** T6: pbkdf2-sha512 of PIN `1234`. */
export const T6 =
  "$pbkdf2-sha512$25000$MDEyMzQ1Njc4OWFiY2RlZg$DUnuPrulnpwCzsloNKf/NFAvPLestbeioV1v1r/pTMT6Bi2l.DWXRwVO7kgqOFaAeudtrf0ZOErb3MQZh4eYeA";
/** T7: legacy PIN `1234` with its seed. */
export const T7 = {
  seed: "000102030405060708090a0b0c0d0e0f",
  hash: "bef3dd7e1bf949e30da61c22b4818684d62b34a0e9b8576a17b58f750faa4a5e",
};
/** T8: admin `Test123!` with pepper "missing" (argon2, privacyIDEA 3.12 parameters). */
export const T8 =
  "$argon2id$v=19$m=65536,t=9,p=4$MDEyMzQ1Njc4OWFiY2RlZg$tIFKHKg3lU2oH0ftkL0xXTLgbZOLR/aH2cnvWUe/HWE";

/** `hex(iv):hex(AES-256-CBC(slot, iv, PKCS#7(text)))` as privacyIDEA writes it. */
export function piEncrypt(slot: 0 | 1, ivHex: string, text: string): string {
  const key = ENC_KEY.subarray(slot * 32, slot * 32 + 32);
  const c = createCipheriv("aes-256-cbc", key, Buffer.from(ivHex, "hex"));
  return `${ivHex}:${Buffer.concat([c.update(text, "utf8"), c.final()]).toString("hex")}`;
}

const TABLES_312 = [
  `create table realm (id integer primary key, name varchar(255) unique, "default" boolean)`,
  `create table resolver (id integer primary key, name varchar(255) unique, rtype varchar(255))`,
  `create table resolverconfig (id integer primary key, resolver_id integer, "Key" varchar(255),
    "Value" varchar(2000), "Type" varchar(2000), "Description" varchar(2000))`,
  `create table resolverrealm (id integer primary key, resolver_id integer, realm_id integer,
    priority integer, node_uuid varchar(36))`,
  `create table token (id integer primary key, description varchar(80), serial varchar(40) unique,
    tokentype varchar(30), user_pin varchar(512), user_pin_iv varchar(32), so_pin varchar(512),
    so_pin_iv varchar(32), pin_seed varchar(34), otplen integer, pin_hash varchar(512),
    key_enc varchar(2800), key_iv varchar(32), maxfail integer, active boolean, revoked boolean,
    locked boolean, failcount integer, count integer, count_window integer, sync_window integer,
    rollout_state varchar(10))`,
  `create table tokeninfo (id integer primary key, "Key" varchar(255), "Value" text,
    "Type" varchar(100), "Description" varchar(2000), token_id integer)`,
  `create table tokenowner (id integer primary key, token_id integer, resolver varchar(120),
    user_id varchar(320), realm_id integer)`,
  `create table tokenrealm (id integer primary key, token_id integer, realm_id integer)`,
  `create table policy (id integer primary key, active boolean, check_all_resolvers boolean,
    name varchar(64) unique, scope varchar(32), action text, realm varchar(256),
    adminrealm varchar(256), adminuser varchar(256), resolver varchar(256), pinode varchar(256),
    "user" varchar(256), client varchar(256), time varchar(64), priority integer,
    user_agents varchar(256), user_case_insensitive boolean)`,
  `create table policycondition (id integer primary key, policy_id integer, section varchar(255),
    "Key" varchar(255), comparator varchar(255), "Value" varchar(2000), active boolean,
    handle_missing_data varchar(255))`,
  `create table description (id integer primary key, object_id integer, object_type varchar(64),
    last_update varchar(64), description text)`,
  `create table eventhandler (id integer primary key, name varchar(64), active boolean,
    ordering integer, position varchar(10), event varchar(255), handlermodule varchar(255),
    condition varchar(1024), action varchar(1024))`,
  `create table eventhandleroption (id integer primary key, eventhandler_id integer,
    "Key" varchar(255), "Value" text, "Type" varchar(2000), "Description" varchar(2000))`,
  `create table eventhandlercondition (id integer primary key, eventhandler_id integer,
    "Key" varchar(255), "Value" varchar(2000), comparator varchar(255))`,
  `create table machineresolver (id integer primary key, name varchar(255), rtype varchar(255))`,
  `create table machineresolverconfig (id integer primary key, resolver_id integer,
    "Key" varchar(255), "Value" varchar(2000), "Type" varchar(2000), "Description" varchar(2000))`,
  `create table machinetoken (id integer primary key, token_id integer,
    machineresolver_id integer, machine_id varchar(255), application varchar(64))`,
  `create table machinetokenoptions (id integer primary key, machinetoken_id integer,
    mt_key varchar(64), mt_value varchar(64))`,
  `create table radiusserver (id integer primary key, identifier varchar(255), server varchar(255),
    port integer, secret varchar(255), dictionary varchar(255), description varchar(2000),
    timeout integer, retries integer, options json)`,
  `create table smtpserver (id integer primary key, identifier varchar(255), server varchar(255),
    port integer, username varchar(255), password varchar(255), sender varchar(255), tls boolean,
    description varchar(2000), timeout integer, enqueue_job boolean)`,
  `create table admin (username varchar(120) primary key, password varchar(255),
    email varchar(255))`,
  `create table config ("Key" varchar(255) primary key, "Value" varchar(2000), "Type" varchar(2000),
    "Description" varchar(2000))`,
  `create table tokengroup (id integer primary key, name varchar(255), "Description" varchar(2000))`,
  `create table pidea_audit (id integer primary key, action varchar(50), signature varchar(620))`,
  `create table alembic_version (version_num varchar(32) not null primary key)`,
];

/**
 * privacyIDEA 3.13.3's schema: 3.12's with the four revisions of spec 17 §4, as an upgrade
 * leaves it (migration b637a1eeeeeb adds the SMTP columns nullable).
 */
const TABLES_313 = [
  ...TABLES_312.filter((t) => !/^create table (smtpserver|pidea_audit) /.test(t)),
  `create table smtpserver (id integer primary key, identifier varchar(255), server varchar(255),
    port integer, username varchar(255), password varchar(255), sender varchar(255), tls boolean,
    description varchar(2000), timeout integer, enqueue_job boolean,
    smime boolean, dont_send_on_error boolean,
    private_key varchar(255), certificate varchar(255), private_key_password varchar(255))`,
  // BIGINT except on SQLite, whose autoincrement needs INTEGER (056b6642ff5d, 06b105a4f941)
  `create table pidea_audit (id bigint primary key, action varchar(50), signature varchar(1100))`,
  `create table challenge (id integer primary key, transaction_id varchar(64), data varchar(512),
    challenge text, "session" varchar(512), serial varchar(40), timestamp timestamp,
    expiration timestamp, received_count integer, otp_valid boolean)`,
];

/** The alembic heads of the two schemas (spec 17 §4). */
const REVISION = { "3.12": "1c48d4ffb8c3", "3.13": "b1a2c3d4e5f6" } as const;

/** Which privacyIDEA release's schema a fixture database has. */
export type PiVersion = keyof typeof REVISION;

function tablesOf(version: PiVersion, engine: "sqlite" | "postgres" | "mysql"): string[] {
  const list = version === "3.13" ? TABLES_313 : TABLES_312;
  if (engine === "sqlite") {
    // SQLite's rowid alias must be INTEGER (the audit id stays one there)
    return list.map((t) => t.replace("id bigint primary key", "id integer primary key"));
  }
  if (engine === "postgres") return list;
  return list.map(mysqlDdl);
}

/**
 * A table of the list as SQLAlchemy makes it on MySQL/MariaDB: identifiers in
 * backticks (`condition`, `default`, `Key` … are reserved or mixed case), ids
 * AUTO_INCREMENT, DATETIME for timestamps, InnoDB.
 */
function mysqlDdl(ddl: string): string {
  return ddl
    .replace(/"(\w+)"/g, "$1")
    .replace(
      /([(,]\s*)(\w+)(\s+(?:integer|bigint|varchar|text|boolean|json|timestamp)\b)/gi,
      "$1`$2`$3",
    )
    .replace(/^create table (\w+)/, "create table `$1`")
    .replace(/(`id` (?:integer|bigint)) primary key/, "$1 not null auto_increment primary key")
    // SQLAlchemy's DateTime is DATETIME there
    .replace(/(`\w+`\s+)timestamp\b/g, "$1datetime") + " engine=InnoDB";
}

type Rows = Record<string, Record<string, unknown>[]>;

/** What the fixture holds, for the assertions. */
export interface PiFixture {
  /** The passwd file of the `users1` resolver (alice uid 1000, bob uid 1001). */
  passwdFile: string;
  /** The hosts file of the `hosts1` machine resolver. */
  hostsFile: string;
  /** TOTP0001's last used step. */
  totpLastStep: number;
}

/** The rows of the installation (see the module doc for what each token tests). */
async function rowsOf(
  dir: string,
  nowMs: number,
  version: PiVersion,
): Promise<{ rows: Rows; fixture: PiFixture }> {
  const passwdFile = `${dir}/passwd`;
  await Deno.writeTextFile(
    passwdFile,
    "alice:x:1000:1000:Alice Smith,,,:/home/alice:/bin/bash\nbob:x:1001:1001:Bob:/home/bob:/bin/sh\n",
  );
  const hostsFile = `${dir}/hosts`;
  await Deno.writeTextFile(hostsFile, "192.168.0.1 gandalf\n");
  // a cheap argon2 (parameters are read from the string, as passlib's are)
  const argonPin = await argon2id({
    password: "1234",
    salt: new TextEncoder().encode("0123456789abcdef"),
    iterations: 2,
    memorySize: 256,
    parallelism: 1,
    hashLength: 32,
    outputType: "encoded",
  });
  // the admin's: pepper "missing" + password, as privacyIDEA hashes it (T8 with cheap parameters)
  const argonAdmin = await argon2id({
    password: "missingTest123!",
    salt: new TextEncoder().encode("0123456789abcdef"),
    iterations: 2,
    memorySize: 256,
    parallelism: 1,
    hashLength: 32,
    outputType: "encoded",
  });
  const totpLastStep = Math.floor(nowMs / 30_000) - 10;
  const token = (id: number, serial: string, extra: Record<string, unknown>) => ({
    id,
    serial,
    tokentype: "hotp",
    description: `migrated ${serial}`,
    otplen: 6,
    pin_hash: "",
    pin_seed: "",
    key_enc: T1.enc,
    key_iv: T1.iv,
    maxfail: 10,
    active: true,
    revoked: false,
    locked: false,
    failcount: 0,
    count: 0,
    count_window: 10,
    sync_window: 1000,
    rollout_state: "",
    ...extra,
  });
  const rows: Rows = {
    realm: [{ id: 1, name: "realm1", default: true }, { id: 2, name: "realm2", default: false }],
    resolver: [{ id: 1, name: "users1", rtype: "passwdresolver" }],
    resolverconfig: [{ id: 1, resolver_id: 1, Key: "fileName", Value: passwdFile, Type: "" }],
    resolverrealm: [
      { id: 1, resolver_id: 1, realm_id: 1, priority: null, node_uuid: "" },
      { id: 2, resolver_id: 1, realm_id: 2, priority: 3, node_uuid: "" },
    ],
    token: [
      // alice: argon2 PIN, next counter 2
      token(1, "HOTP0001", { pin_hash: argonPin, count: 2 }),
      // bob: pbkdf2 PIN (T6), TOTP with its last used step
      token(2, "TOTP0001", { tokentype: "TOTP", pin_hash: T6, count: totpLastStep }),
      // revoked and locked
      token(3, "LOCK0001", { active: false, revoked: true, locked: true, pin_hash: T6 }),
      // legacy salted SHA-256 PIN (T7), legacy-padded secret (T2)
      token(4, "LEGA0001", { pin_hash: T7.hash, pin_seed: ` ${T7.seed} `, key_enc: T2_ENC }),
      // PIN stored encrypted (T4), fail counter carried
      token(5, "ENCP0001", { pin_hash: T4, failcount: 3, maxfail: 5 }),
      // a u2f token without its registration (no key handle, pubKey or appId)
      token(6, "U2F0001", { tokentype: "u2f", key_enc: "", key_iv: "" }),
    ],
    tokeninfo: [
      { id: 1, token_id: 2, Key: "timeStep", Value: "30", Type: "" },
      { id: 2, token_id: 2, Key: "hashlib", Value: "sha1", Type: "" },
      { id: 3, token_id: 2, Key: "timeWindow", Value: "180", Type: "" },
      { id: 4, token_id: 1, Key: "hashlib", Value: "sha1", Type: "" },
      { id: 5, token_id: 1, Key: "secret_note", Value: T3, Type: "password" },
      { id: 6, token_id: 1, Key: "tokenkind", Value: "software", Type: "" },
      // text beyond ASCII comes through every engine's encoding unchanged
      { id: 7, token_id: 1, Key: "note", Value: "Jürgen’s Schlüssel ✓", Type: "" },
    ],
    tokenowner: [
      { id: 1, token_id: 1, resolver: "users1", user_id: "1000", realm_id: 1 },
      { id: 2, token_id: 2, resolver: "users1", user_id: "1001", realm_id: 1 },
      { id: 3, token_id: 3, resolver: "users1", user_id: "1000", realm_id: 1 },
    ],
    tokenrealm: [
      { id: 1, token_id: 1, realm_id: 1 },
      { id: 2, token_id: 2, realm_id: 1 },
      { id: 3, token_id: 3, realm_id: 1 },
      { id: 4, token_id: 4, realm_id: 2 },
    ],
    policy: [
      {
        id: 1,
        active: true,
        check_all_resolvers: false,
        name: "pol_auth",
        scope: "authentication",
        action: "otppin=tokenpin",
        realm: "realm1",
        adminrealm: "",
        adminuser: "",
        resolver: "",
        pinode: "",
        user: "",
        client: "",
        time: "",
        priority: 2,
        user_agents: "",
        user_case_insensitive: false,
      },
      {
        id: 2,
        active: false,
        check_all_resolvers: false,
        name: "pol_admin",
        scope: "admin",
        action: "tokenlist, enable",
        realm: "realm2",
        adminrealm: "",
        adminuser: "helpdesk",
        resolver: "",
        pinode: "",
        user: "",
        client: "10.0.0.0/8",
        time: "",
        priority: 1,
        user_agents: "",
        user_case_insensitive: false,
      },
    ],
    policycondition: [{
      id: 1,
      policy_id: 1,
      section: "userinfo",
      Key: "email",
      comparator: "matches",
      Value: ".*@example.com",
      active: false,
      handle_missing_data: "raise_error",
    }],
    description: [{ id: 1, object_id: 1, object_type: "policy", description: "PINs of realm1" }],
    eventhandler: [{
      id: 1,
      name: "count_inits",
      active: true,
      ordering: 0,
      position: "post",
      event: "token_init",
      handlermodule: "Counter",
      condition: "",
      action: "increase_counter",
    }],
    eventhandleroption: [{
      id: 1,
      eventhandler_id: 1,
      Key: "counter_name",
      Value: "inits",
      Type: "",
    }],
    eventhandlercondition: [],
    machineresolver: [{ id: 1, name: "hosts1", rtype: "hosts" }],
    machineresolverconfig: [{ id: 1, resolver_id: 1, Key: "filename", Value: hostsFile, Type: "" }],
    machinetoken: [{
      id: 1,
      token_id: 4,
      machineresolver_id: null,
      machine_id: null,
      application: "offline",
    }],
    machinetokenoptions: [{ id: 1, machinetoken_id: 1, mt_key: "count", mt_value: "12" }],
    radiusserver: [{
      id: 1,
      identifier: "rad1",
      server: "127.0.0.1",
      port: 1812,
      secret: T3,
      dictionary: "/etc/privacyidea/dictionary",
      description: "old RADIUS",
      timeout: 5,
      retries: 3,
      options: '{"message_authenticator": true}',
    }],
    smtpserver: [{
      id: 1,
      identifier: "mail1",
      server: "127.0.0.1",
      port: 25,
      username: "pi",
      password: piEncrypt(1, "0f0e0d0c0b0a09080706050403020100", "smtp-secret"),
      sender: "pi@example.com",
      tls: false,
      description: "",
      timeout: 10,
      enqueue_job: false,
    }],
    admin: [{ username: "piadmin", password: argonAdmin, email: "piadmin@example.com" }],
    config: [
      { Key: "__timestamp__", Value: "1700000000", Type: "", Description: "" },
      { Key: "DefaultMaxFailCount", Value: "10", Type: "", Description: "" },
      { Key: "hotp.hashlib", Value: "sha1", Type: "", Description: "" },
      {
        Key: "yubico.secret",
        Value: piEncrypt(1, "00112233445566778899aabbccddeeff", "c2VjcmV0LWtleQ=="),
        Type: "password",
        Description: "",
      },
    ],
    tokengroup: [{ id: 1, name: "group1", Description: "" }],
    pidea_audit: [{ id: 1, action: "POST /token/init", signature: "rsa_sha256_pss:00" }],
    alembic_version: [{ version_num: REVISION[version] }],
  };
  if (version === "3.13") add313(rows, nowMs);
  return { rows, fixture: { passwdFile, hostsFile, totpLastStep } };
}

/** What a privacyIDEA 3.13 installation holds beyond 3.12's rows (spec 17 §4). */
function add313(rows: Rows, nowMs: number): void {
  const smimeOff = {
    smime: false,
    dont_send_on_error: false,
    private_key: "",
    certificate: "",
    private_key_password: "",
  };
  rows.smtpserver = [
    { ...rows.smtpserver[0], ...smimeOff },
    {
      ...rows.smtpserver[0],
      ...smimeOff,
      id: 2,
      identifier: "mail-signed",
      smime: true,
      dont_send_on_error: true,
      private_key: "/etc/privacyidea/smime/key.pem",
      certificate: "/etc/privacyidea/smime/cert.pem",
      private_key_password: piEncrypt(1, "1f1e1d1c1b1a19181716151413121110", "key-password"),
    },
    // a row the migration left NULL: the model's NOT NULL default false applies
    { ...rows.smtpserver[0], ...smimeOff, id: 3, identifier: "mail-null", smime: null },
  ];
  // set_policy writes a description row even without a description
  rows.description = [
    ...rows.description,
    { id: 2, object_id: 2, object_type: "policy", description: null },
  ];
  // a BIGINT id beyond 2^32 and a 4096-bit RSA signature (1028 characters)
  rows.pidea_audit = [
    ...rows.pidea_audit,
    {
      id: 5_000_000_000,
      action: "POST /validate/check",
      signature: `rsa_sha256_pss:${"ab".repeat(507)}`,
    },
  ];
  const at = (offsetMs: number) =>
    new Date(nowMs + offsetMs).toISOString().replace("T", " ").replace(/\.\d+Z$/, "");
  // push and FIDO2 challenges carry JSON data in 3.13; a 3.12 row keeps its plain text
  rows.challenge = [
    {
      id: 1,
      transaction_id: "01234567890123456789",
      data: '{"type": "push", "mode": "code_to_phone", "smartphone_confirmed": false}',
      challenge: "3j2k4l5m",
      session: "",
      serial: "HOTP0001",
      timestamp: at(-10_000),
      expiration: at(110_000),
      received_count: 0,
      otp_valid: false,
    },
    {
      id: 2,
      transaction_id: "98765432109876543210",
      data: "sms",
      challenge: "",
      session: "",
      serial: "TOTP0001",
      timestamp: at(-20_000),
      expiration: at(100_000),
      received_count: 0,
      otp_valid: false,
    },
  ];
}

/** Options of the fixture builders. */
export interface PiFixtureOptions {
  /** The schema's privacyIDEA release (default 3.12). */
  version?: PiVersion;
}

/** Writes the installation into a new SQLite file `<dir>/privacyidea.db`; returns its URL. */
export async function createPiSqlite(
  dir: string,
  nowMs: number,
  options: PiFixtureOptions = {},
): Promise<{ url: string; fixture: PiFixture }> {
  const version = options.version ?? "3.12";
  const { rows, fixture } = await rowsOf(dir, nowMs, version);
  const path = `${dir}/privacyidea.db`;
  const db = new DatabaseSync(path);
  for (const ddl of tablesOf(version, "sqlite")) db.exec(ddl);
  for (const [table, list] of Object.entries(rows)) {
    for (const r of list) {
      const cols = Object.keys(r);
      db.prepare(
        `insert into "${table}" (${cols.map((c) => `"${c}"`).join(", ")}) values (${
          cols.map(() => "?").join(", ")
        })`,
      ).run(
        ...cols.map((c) =>
          typeof r[c] === "boolean" ? (r[c] ? 1 : 0) : r[c] as string | number | null
        ),
      );
    }
  }
  db.close();
  return { url: `sqlite:///${path}`, fixture };
}

/** Writes the installation into a new database on the PostgreSQL cluster `clusterUrl`. */
export async function createPiPostgres(
  clusterUrl: string,
  dir: string,
  nowMs: number,
  options: PiFixtureOptions = {},
): Promise<{ url: string; fixture: PiFixture; drop: () => Promise<void> }> {
  const version = options.version ?? "3.12";
  const { rows, fixture } = await rowsOf(dir, nowMs, version);
  const name = `pi_${Deno.pid}_${crypto.randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const u = new URL(clusterUrl);
  u.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    for (const ddl of tablesOf(version, "postgres")) await client.query(ddl);
    for (const [table, list] of Object.entries(rows)) {
      for (const r of list) {
        const cols = Object.keys(r);
        await client.query(
          `insert into "${table}" (${cols.map((c) => `"${c}"`).join(", ")}) values (${
            cols.map((_, i) => `$${i + 1}`).join(", ")
          })`,
          cols.map((c) => r[c]),
        );
      }
    }
  } finally {
    await client.end();
  }
  return {
    url: u.toString().replace(/^postgres:/, "postgresql:"),
    fixture,
    drop: async () => {
      const c = new pg.Client({ connectionString: clusterUrl });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

/**
 * Writes the installation into a new database on the MariaDB server (as
 * privacyIDEA's installer has it: `utf8` tables, InnoDB); returns its URL in
 * the SQLAlchemy form pi.cfg holds (`mysql+pymysql://…`).
 */
export async function createPiMysql(
  server: MariaDb,
  dir: string,
  nowMs: number,
  options: PiFixtureOptions = {},
): Promise<{ url: string; fixture: PiFixture; database: string; drop: () => Promise<void> }> {
  const version = options.version ?? "3.12";
  const { rows, fixture } = await rowsOf(dir, nowMs, version);
  const database = `pi_${Deno.pid}_${crypto.randomUUID().slice(0, 8)}`;
  await server.sql(`create database \`${database}\` character set utf8 collate utf8_unicode_ci`);
  const conn = await mysql.createConnection({
    host: server.host,
    port: server.port,
    user: server.user,
    password: server.password,
    database,
    charset: "utf8mb4",
  });
  try {
    for (const ddl of tablesOf(version, "mysql")) await conn.query(ddl);
    for (const [table, list] of Object.entries(rows)) {
      for (const r of list) {
        const cols = Object.keys(r);
        await conn.execute(
          `insert into \`${table}\` (${cols.map((c) => `\`${c}\``).join(", ")}) values (${
            cols.map(() => "?").join(", ")
          })`,
          cols.map((c) => r[c] as string | number | boolean | null),
        );
      }
    }
  } finally {
    await conn.end();
  }
  return {
    url: server.urlOf(database).replace(/^mysql:/, "mysql+pymysql:"),
    fixture,
    database,
    drop: async () => void await server.sql(`drop database if exists \`${database}\``),
  };
}
