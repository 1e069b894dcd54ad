/**
 * Every migration in order. The list is explicit so `deno compile` bundles it;
 * a merged migration is never edited: add a new one.
 *
 * @module
 */
import type { Migration } from "kysely/migration";
import * as m0001 from "./0001_foundation.ts";
import * as m0002 from "./0002_users.ts";
import * as m0003 from "./0003_tokens.ts";
import * as m0004 from "./0004_policies.ts";
import * as m0005 from "./0005_events.ts";
import * as m0006 from "./0006_subscriptions.ts";
import * as m0007 from "./0007_radius.ts";
import * as m0008 from "./0008_machines.ts";
import * as m0009 from "./0009_token_owner_uid.ts";
import * as m0010 from "./0010_audit_serial_index.ts";
import * as m0011 from "./0011_admin_credential_version.ts";
import * as m0012 from "./0012_key_check.ts";
import * as m0013 from "./0013_cache_epoch.ts";
import * as m0014 from "./0014_privacyidea_server.ts";
import * as m0015 from "./0015_smsgateway.ts";
import * as m0016 from "./0016_credential_id_hash.ts";
import * as m0017 from "./0017_audit_request_id.ts";
import * as m0018 from "./0018_auth_cache.ts";
import * as m0019 from "./0019_user_cache.ts";
import * as m0020 from "./0020_audit_authentication.ts";
import * as m0021 from "./0021_periodic_tasks.ts";
import * as m0022 from "./0022_caconnector.ts";
import * as m0023 from "./0023_token_groups.ts";
import * as m0024 from "./0024_service_ids.ts";
import * as m0025 from "./0025_token_containers.ts";
import * as m0026 from "./0026_password_reset.ts";
import * as m0027 from "./0027_import_keys.ts";
import * as m0028 from "./0028_token_owner_epoch.ts";

/** Migration name → module, applied in key order. */
export const MIGRATIONS: Record<string, Migration> = {
  "0001_foundation": m0001,
  "0002_users": m0002,
  "0003_tokens": m0003,
  "0004_policies": m0004,
  "0005_events": m0005,
  "0006_subscriptions": m0006,
  "0007_radius": m0007,
  "0008_machines": m0008,
  "0009_token_owner_uid": m0009,
  "0010_audit_serial_index": m0010,
  "0011_admin_credential_version": m0011,
  "0012_key_check": m0012,
  "0013_cache_epoch": m0013,
  "0014_privacyidea_server": m0014,
  "0015_smsgateway": m0015,
  "0016_credential_id_hash": m0016,
  "0017_audit_request_id": m0017,
  "0018_auth_cache": m0018,
  "0019_user_cache": m0019,
  "0020_audit_authentication": m0020,
  "0021_periodic_tasks": m0021,
  "0022_caconnector": m0022,
  "0023_token_groups": m0023,
  "0024_service_ids": m0024,
  "0025_token_containers": m0025,
  "0026_password_reset": m0026,
  "0027_import_keys": m0027,
  "0028_token_owner_epoch": m0028,
};
