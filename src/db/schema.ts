/**
 * Table types of the Tessera database. Each feature adds its tables here and
 * a migration under `migrations/`. Booleans are stored as 0/1 integers and
 * times as integer milliseconds since the epoch, so SQL stays portable.
 *
 * @module
 */
import type { Generated, Kysely } from "kysely";

/** Local administrators (`admin add`, `POST /auth`). */
export interface AdminTable {
  id: Generated<number>;
  username: string;
  email: string;
  password_hash: string;
  created_at: number;
  /** Changes with the credentials; admin JWTs carry it (migration 0011). */
  credential_version: Generated<string>;
}

/** System configuration key/value pairs (`/system/`). */
export interface ConfigTable {
  key: string;
  value: string;
  type: string;
  description: string;
}

/** One row per API request (`/audit/`). */
export interface AuditTable {
  id: Generated<number>;
  ts: number;
  action: string;
  success: number;
  serial: string;
  token_type: string;
  user: string;
  realm: string;
  resolver: string;
  administrator: string;
  client: string;
  user_agent: string;
  info: string;
  policies: string;
  duration_ms: number;
  node: string;
  request_id: string;
  /** `ACCEPT`, `REJECT`, `CHALLENGE`, `DECLINED` of an authentication request, else "". */
  authentication: string;
}

/** Every table Tessera knows. */
export interface Database {
  admin: AdminTable;
  config: ConfigTable;
  audit: AuditTable;
  machineresolver: MachineResolverTable;
  machineresolverconfig: MachineResolverConfigTable;
  machinetoken: MachineTokenTable;
  machinetokenoption: MachineTokenOptionTable;
  subscription: SubscriptionTable;
  radiusserver: RadiusServerTable;
  privacyideaserver: PrivacyideaServerTable;
  smsgateway: SmsGatewayTable;
  smsgatewayoption: SmsGatewayOptionTable;
  token: TokenTable;
  tokeninfo: TokenInfoTable;
  token_realm: TokenRealmTable;
  challenge: ChallengeTable;
  auth_cache: AuthCacheTable;
  passwordreset: PasswordResetTable;
  importkey: ImportKeyTable;
  policy: PolicyTable;
  policy_version: PolicyVersionTable;
  eventhandler: EventHandlerTable;
  eventconfig_version: EventConfigVersionTable;
  eventcounter: EventCounterTable;
  smtpserver: SmtpServerTable;
  resolver: ResolverTable;
  realm: RealmTable;
  realm_resolver: RealmResolverTable;
  user_attribute: UserAttributeTable;
  key_check: KeyCheckTable;
  cache_epoch: CacheEpochTable;
  usercache: UserCacheTable;
  user_cache_generation: UserCacheGenerationTable;
  caconnector: CaConnectorTable;
  caconnectorconfig: CaConnectorConfigTable;
  localca: LocalCaTable;
  cacertificate: CaCertificateTable;
  periodictask: PeriodicTaskTable;
  periodictaskoption: PeriodicTaskOptionTable;
  periodictasklastrun: PeriodicTaskLastRunTable;
  periodictasklease: PeriodicTaskLeaseTable;
  monitoringstats: MonitoringStatsTable;
  tokengroup: TokenGroupTable;
  tokentokengroup: TokenTokenGroupTable;
  serviceid: ServiceIdTable;
  tokencontainer: TokenContainerTable;
  tokencontainertoken: TokenContainerTokenTable;
  tokencontainerowner: TokenContainerOwnerTable;
  tokencontainerrealm: TokenContainerRealmTable;
  tokencontainerstates: TokenContainerStateTable;
  tokencontainerinfo: TokenContainerInfoTable;
  tokencontainertemplate: TokenContainerTemplateTable;
}

/** Periodic task definitions (`/periodictask/`, migration 0021). */
export interface PeriodicTaskTable {
  id: Generated<number>;
  name: string;
  active: number;
  retry_if_failed: number;
  /** Crontab expression. */
  interval: string;
  /** Node names, joined by ", ". */
  nodes: string;
  taskmodule: string;
  ordering: number;
  /** Milliseconds since the epoch of the last change. */
  last_update: number;
}

/** Options of a periodic task (values as strings). */
export interface PeriodicTaskOptionTable {
  id: Generated<number>;
  periodictask_id: number;
  key: string;
  value: string;
}

/** When a periodic task last ran on a node (milliseconds since the epoch). */
export interface PeriodicTaskLastRunTable {
  id: Generated<number>;
  periodictask_id: number;
  node: string;
  timestamp: number;
}

/** Which process runs a periodic task for a node, until when (see the scheduler). */
export interface PeriodicTaskLeaseTable {
  periodictask_id: number;
  node: string;
  holder: string;
  /** Milliseconds since the epoch; 0: free. */
  expires_at: number;
}

/** Time series the periodic tasks write (`/monitoring/`). */
export interface MonitoringStatsTable {
  id: Generated<number>;
  /** Milliseconds since the epoch. */
  timestamp: number;
  stats_key: string;
  stats_value: number;
}

/** privacyIDEA's user cache: which user a login named, and when (migration 0019). */
export interface UserCacheTable {
  id: Generated<number>;
  /** The user's login as the resolver has it. */
  username: string;
  /** The login the request used. */
  used_login: string;
  resolver: string;
  user_id: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** One row moved when the user cache is flushed or a user changed (migration 0019). */
export interface UserCacheGenerationTable {
  id: number;
  n: number;
}

/** One row counting changes of the cached tables (see migration 0013). */
export interface CacheEpochTable {
  id: number;
  n: number;
}

/** Which key file the database's secrets are encrypted under (see migration 0012). */
export interface KeyCheckTable {
  name: string;
  fingerprint: string;
  created_at: number;
}

/** The typed Kysely handle every store receives. */
export type Db = Kysely<Database>;

/** User resolvers (`/resolver/`); `config` is a JSON object with encrypted secrets. */
export interface ResolverTable {
  id: Generated<number>;
  name: string;
  type: string;
  config: string;
  meta: string;
  updated_at: number;
}

/** Realms (`/realm/`). */
export interface RealmTable {
  id: Generated<number>;
  name: string;
  is_default: number;
}

/** Resolvers of a realm with optional priority and node pinning. */
export interface RealmResolverTable {
  id: Generated<number>;
  realm_id: number;
  resolver_id: number;
  priority: number | null;
  node: string;
}

/** Custom user attributes per (uid, resolver, realm). */
export interface UserAttributeTable {
  id: Generated<number>;
  user_id: string;
  resolver: string;
  realm: string;
  key: string;
  value: string;
  type: string;
}

/** Event handler definitions (`/event/`); options and conditions are JSON objects of strings. */
export interface EventHandlerTable {
  id: Generated<number>;
  name: string;
  active: number;
  ordering: number;
  position: string;
  abort_on_error: number;
  event: string;
  handlermodule: string;
  action: string;
  options: string;
  conditions: string;
}

/** One row: bumped on every event config change so each node reloads its cache. */
export interface EventConfigVersionTable {
  id: number;
  version: number;
}

/** Named counters of the Counter event handler. */
export interface EventCounterTable {
  counter_name: string;
  counter_value: number;
}

/** SMTP server definitions (`/smtpserver/`); the password is encrypted. */
export interface SmtpServerTable {
  id: Generated<number>;
  identifier: string;
  server: string;
  port: number;
  tls: number;
  username: string;
  password: string;
  sender: string;
  description: string;
  timeout: number;
  enqueue_job: number;
}

/** Policies (`/policy/`); list fields are comma-separated strings, `conditions` JSON. */
export interface PolicyTable {
  id: Generated<number>;
  name: string;
  scope: string;
  action: string;
  active: number;
  priority: number;
  realm: string;
  resolver: string;
  user: string;
  adminrealm: string;
  adminuser: string;
  pinode: string;
  client: string;
  time: string;
  check_all_resolvers: number;
  user_case_insensitive: number;
  conditions: string;
  description: string | null;
  user_agents: string;
}

/** One row (id 1): bumped on every policy change so every node reloads its compiled set. */
export interface PolicyVersionTable {
  id: number;
  version: number;
}

/** Tokens (issue 4). `key_enc` holds the AES-256-GCM encrypted secret, `pin_hash` the keyed PIN hash. */
export interface TokenTable {
  id: Generated<number>;
  serial: string;
  tokentype: string;
  description: string;
  key_enc: string;
  pin_hash: string;
  active: number;
  revoked: number;
  locked: number;
  failcount: number;
  maxfail: number;
  count: number;
  count_window: number;
  sync_window: number;
  otplen: number;
  rollout_state: string;
  /** Owner: uid in the resolver, resolver name, realm and login ("" when unassigned). */
  user_id: string;
  resolver: string;
  user_realm: string;
  user_login: string;
  created_at: number;
}

/** Token info key/value pairs (values are strings; `type` "password" = encrypted). */
export interface TokenInfoTable {
  id: Generated<number>;
  token_id: number;
  key: string;
  value: string;
  type: string;
}

/** Token realms. */
export interface TokenRealmTable {
  token_id: number;
  realm: string;
}

/** Open challenges of challenge-response tokens. */
export interface ChallengeTable {
  id: Generated<number>;
  transaction_id: string;
  serial: string;
  data: string;
  challenge: string;
  session: string;
  answered: number;
  received_count: number;
  created_at: number;
  expires_at: number;
}

/** Credentials that authenticated a user recently (policy `auth_cache`, migration 0018). */
export interface AuthCacheTable {
  id: Generated<number>;
  login: string;
  realm: string;
  resolver: string;
  /** Keyed hash of the whole `pass` (as token PINs are hashed). */
  pass_hash: string;
  /** Milliseconds since the epoch. */
  first_auth: number;
  last_auth: number;
  auth_count: number;
}

/** Outstanding password recovery codes (`/recover`, migration 0026); times in ms. */
export interface PasswordResetTable {
  id: Generated<number>;
  /** Keyed, salted hash of the code (as token PINs are hashed). */
  code_hash: string;
  username: string;
  realm: string;
  created_at: number;
  expires_at: number;
}

/** OpenPGP key pairs for encrypted token import files (migration 0027). */
export interface ImportKeyTable {
  /** Long key id, 16 upper-case hex digits. */
  keyid: string;
  /** 40 (v4) or 64 (v6) upper-case hex digits. */
  fingerprint: string;
  public_armor: string;
  /** The armoured private key, encrypted with the configuration key. */
  private_enc: string;
  /** `generated` (by Tessera) or `imported` (an operator's key, e.g. privacyIDEA's). */
  origin: string;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/** RADIUS server definitions (`/radiusserver/`); `secret` is encrypted, `options` JSON or null. */
export interface RadiusServerTable {
  id: Generated<number>;
  identifier: string;
  server: string;
  port: number;
  secret: string;
  description: string;
  dictionary: string;
  retries: number;
  timeout: number;
  options: string | null;
}

/** Remote privacyIDEA server definitions (`/privacyideaserver/`); `tls` is 0/1 (verify the certificate). */
export interface PrivacyideaServerTable {
  id: Generated<number>;
  identifier: string;
  url: string;
  tls: number;
  description: string;
}

/** SMS gateway definitions (`/smsgateway/`). */
export interface SmsGatewayTable {
  id: Generated<number>;
  identifier: string;
  description: string;
  providermodule: string;
}

/** Options (`type` "option") and headers (`type` "header") of SMS gateways; secret values encrypted. */
export interface SmsGatewayOptionTable {
  id: Generated<number>;
  gateway_id: number;
  key: string;
  value: string;
  type: string;
  is_secret: number;
}

/** Uploaded vendor-signed subscriptions (`/subscriptions/`); dates are midnight UTC in ms. */
export interface SubscriptionTable {
  id: Generated<number>;
  application: string;
  for_name: string;
  for_address: string;
  for_email: string;
  for_phone: string;
  for_url: string;
  for_comment: string;
  by_name: string;
  by_email: string;
  by_address: string;
  by_phone: string;
  by_url: string;
  date_from: number;
  date_till: number;
  num_users: number;
  num_tokens: number;
  num_clients: number;
  level: string;
  signature: string;
  updated_at: number;
}

/** Machine resolvers (`/machineresolver/`); `name_key` is the lower-cased, unique name. */
export interface MachineResolverTable {
  id: Generated<number>;
  name: string;
  name_key: string;
  rtype: string;
}

/** Config entries of a machine resolver; `type` "password" values are encrypted. */
export interface MachineResolverConfigTable {
  id: Generated<number>;
  resolver_id: number;
  key: string;
  value: string;
  type: string;
  description: string;
}

/** Token ↔ machine/application bindings (`/machine/token`); machine columns null = no machine. */
export interface MachineTokenTable {
  id: Generated<number>;
  token_id: number;
  machineresolver_id: number | null;
  machine_id: string | null;
  application: string;
}

/** Options of a machine-token binding (strings of at most 64 characters). */
export interface MachineTokenOptionTable {
  id: Generated<number>;
  machinetoken_id: number;
  key: string;
  value: string;
}

/** CA connectors (`/caconnector/`, migration 0022). */
export interface CaConnectorTable {
  id: Generated<number>;
  name: string;
  catype: string;
}

/** Config entries of a CA connector as the client sent them. */
export interface CaConnectorConfigTable {
  id: Generated<number>;
  caconnector_id: number;
  key: string;
  value: string;
  type: string;
  description: string;
}

/** A local CA's key (encrypted PKCS#8), certificate, next serial, templates (JSON) and CRL. */
export interface LocalCaTable {
  caconnector_id: number;
  key_enc: string;
  certificate: string;
  /** Upper-case hex. */
  next_serial: string;
  templates: string;
  crl: string;
  crl_number: number;
}

/** Certificates a local CA issued or knows (`index.txt`); status V (valid) or R (revoked). */
export interface CaCertificateTable {
  id: Generated<number>;
  caconnector_id: number;
  serial: string;
  subject: string;
  /** Milliseconds since the epoch. */
  not_after: number;
  status: string;
  revoked_at: number | null;
  reason: string;
  certificate: string;
}

/** Token groups (`/tokengroup/`, migration 0023). */
export interface TokenGroupTable {
  id: Generated<number>;
  name: string;
  description: string;
}

/** The groups a token is in. */
export interface TokenTokenGroupTable {
  token_id: number;
  tokengroup_id: number;
}

/** Service IDs (`/serviceid/`, migration 0024). */
export interface ServiceIdTable {
  id: Generated<number>;
  name: string;
  description: string;
}

/** Token containers (`/container/`, migration 0025); times in ms, null = never. */
export interface TokenContainerTable {
  id: Generated<number>;
  serial: string;
  /** Lower case. */
  type: string;
  description: string;
  /** Last authentication with one of its tokens. */
  last_seen: number | null;
  /** Last synchronisation with the app. */
  last_updated: number | null;
  template_id: number | null;
  created_at: number;
}

/** The container a token is in (a token is in at most one). */
export interface TokenContainerTokenTable {
  token_id: number;
  container_id: number;
}

/** The owner of a container (at most one). */
export interface TokenContainerOwnerTable {
  container_id: number;
  user_id: string;
  resolver: string;
  realm: string;
  login: string;
}

/** The realms of a container. */
export interface TokenContainerRealmTable {
  container_id: number;
  realm: string;
}

/** The states of a container. */
export interface TokenContainerStateTable {
  container_id: number;
  state: string;
}

/** Container info; type `pi_internal` marks keys the server manages. */
export interface TokenContainerInfoTable {
  id: Generated<number>;
  container_id: number;
  key: string;
  value: string;
  type: string;
  description: string;
}

/** Container templates: token init parameters to enrol with a new container. */
export interface TokenContainerTemplateTable {
  id: Generated<number>;
  name: string;
  container_type: string;
  /** JSON text `{"tokens": [...]}`. */
  options: string;
  is_default: number;
}
