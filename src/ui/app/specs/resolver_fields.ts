/**
 * The fields of each resolver type's form: the keys the type uses (src/domain/resolver/), typed,
 * grouped and with help. A test compares them with the server's defaults of each type, so a key
 * the server knows is never silently missing from the form.
 *
 * @module
 */
import type { FieldSpec } from "./field_spec.ts";

/** The resolver types Tessera has, with the text the type list shows. */
export const RESOLVER_TYPES: [string, string][] = [
  ["passwdresolver", "passwd file (passwdresolver)"],
  ["ldapresolver", "LDAP or Active Directory (ldapresolver)"],
  ["sqlresolver", "SQL database (sqlresolver)"],
  ["httpresolver", "HTTP API (httpresolver)"],
  ["entraidresolver", "Microsoft Entra ID (entraidresolver)"],
  ["keycloakresolver", "Keycloak (keycloakresolver)"],
  ["scimresolver", "SCIM 1.0 (scimresolver)"],
];

const on = (key: string) => (v: Record<string, string>) =>
  ["1", "true", "yes", "on"].includes((v[key] ?? "").trim().toLowerCase());

// --------------------------------------------------------------------------- SQL

const SQLITE_DRIVERS = ["", "sqlite", "sqlite3", "sqlite+pysqlite"];
const isServer = (v: Record<string, string>) =>
  !SQLITE_DRIVERS.includes((v.Driver ?? "").trim().toLowerCase());

const SQL: FieldSpec[] = [
  {
    key: "Driver",
    type: "select",
    group: "Database",
    options: [
      ["sqlite", "SQLite file (sqlite)"],
      ["mysql+pymysql", "MariaDB or MySQL (mysql+pymysql)"],
      ["mysql", "MariaDB or MySQL (mysql)"],
      ["mariadb", "MariaDB (mariadb)"],
      ["mariadb+mariadbconnector", "MariaDB (mariadb+mariadbconnector)"],
      ["postgresql", "PostgreSQL (postgresql)"],
      ["postgresql+psycopg2", "PostgreSQL (postgresql+psycopg2)"],
      ["postgresql+psycopg", "PostgreSQL (postgresql+psycopg)"],
      ["postgresql+pg8000", "PostgreSQL (postgresql+pg8000)"],
    ],
    help: "privacyIDEA's driver names. A database server needs Server, Port, User and Password.",
  },
  {
    key: "Server",
    type: "text",
    group: "Database",
    showIf: isServer,
    help: "Host name or address of the database server (empty: localhost).",
  },
  {
    key: "Port",
    type: "int",
    min: 1,
    max: 65535,
    group: "Database",
    showIf: isServer,
    help: "Empty: 3306 for MariaDB/MySQL, 5432 for PostgreSQL.",
  },
  {
    key: "Database",
    type: "text",
    required: true,
    group: "Database",
    help: "The database on the server, or the SQLite file (relative paths are under the data " +
      "directory; an editable resolver creates its file).",
  },
  {
    key: "User",
    type: "text",
    group: "Database",
    showIf: isServer,
    help: "The database login; %40, %3A, %2F stand for @, : and / (as in privacyIDEA).",
  },
  {
    key: "Password",
    type: "password",
    group: "Database",
    showIf: isServer,
    help: "Stored encrypted; percent-encoded like User.",
  },
  {
    key: "conParams",
    type: "text",
    group: "Database",
    showIf: isServer,
    help: "Connection parameters joined by &: charset, unix_socket, ssl_ca, " +
      "ssl_check_hostname (MariaDB/MySQL); sslmode, sslrootcert, host (PostgreSQL).",
  },
  {
    key: "poolSize",
    type: "int",
    min: 1,
    max: 100,
    group: "Database",
    showIf: isServer,
    help: "Connections each node keeps to the server at most.",
  },
  {
    key: "poolTimeout",
    type: "int",
    min: 1,
    max: 600,
    group: "Database",
    showIf: isServer,
    help: "Seconds a statement, and the wait for a connection, may take.",
  },
  {
    key: "poolRecycle",
    type: "int",
    min: -1,
    group: "Database",
    showIf: isServer,
    help: "Seconds after which a connection is replaced (-1 or 0: never).",
  },
  {
    key: "Table",
    type: "text",
    required: true,
    group: "Users",
    help: "The table of the users; schema.table works too.",
  },
  {
    key: "Map",
    type: "textarea",
    rows: 4,
    group: "Users",
    help: 'Tessera attribute → column, as JSON or YAML: {"userid": "id", "username": "login", …}.',
  },
  {
    key: "Where",
    type: "text",
    group: "Users",
    help: "A filter of column op value parts joined by and, e.g. status == active.",
  },
  {
    key: "Limit",
    type: "int",
    min: 1,
    max: 100000,
    group: "Users",
    help: "Most users a list shows.",
  },
  {
    key: "Encoding",
    type: "text",
    group: "Users",
    help: "How binary column values are decoded (e.g. latin1, utf8, cp1252).",
  },
  {
    key: "Editable",
    type: "bool",
    group: "Writing",
    help: "Users can be added, changed and deleted through Tessera.",
  },
  {
    key: "Password_Hash_Type",
    type: "select",
    group: "Writing",
    showIf: on("Editable"),
    options: [
      "SSHA256",
      "SSHA512",
      "SSHA",
      "SHA",
      "BCRYPT",
      "SHA512CRYPT",
      "SHA256CRYPT",
      "MD5CRYPT",
      "PHPASS",
      "OTRS",
    ],
    help: "The format of passwords Tessera writes.",
  },
];

// --------------------------------------------------------------------------- LDAP

const LDAP: FieldSpec[] = [
  {
    key: "LDAPURI",
    type: "text",
    required: true,
    group: "Directory",
    help: "ldap:// or ldaps:// addresses; several (comma separated) form a pool with failover.",
  },
  {
    key: "LDAPBASE",
    type: "text",
    required: true,
    group: "Directory",
    help: "Where users are searched, e.g. ou=people,dc=example,dc=org.",
  },
  {
    key: "SCOPE",
    type: "select",
    options: ["SUBTREE", "LEVEL", "BASE"],
    group: "Directory",
    help: "How deep below the base users are searched.",
  },
  {
    key: "AUTHTYPE",
    type: "select",
    options: ["Simple"],
    group: "Directory",
    help: "Tessera binds with Simple binds (NTLM and SASL are refused).",
  },
  {
    key: "BINDDN",
    type: "text",
    group: "Directory",
    help: "The account searches bind as (empty: anonymous).",
  },
  {
    key: "BINDPW",
    type: "password",
    group: "Directory",
    help: "Stored encrypted.",
  },
  {
    key: "START_TLS",
    type: "bool",
    group: "TLS",
    help: "Upgrade ldap:// connections with StartTLS.",
  },
  {
    key: "TLS_VERIFY",
    type: "bool",
    group: "TLS",
    help: "Check the server's certificate.",
  },
  {
    key: "TLS_CA_FILE",
    type: "text",
    group: "TLS",
    help: "PEM file of the CA that signed the server's certificate (empty: the system's CAs).",
  },
  {
    key: "TLS_VERSION",
    type: "select",
    options: [
      ["2", "any (2)"],
      ["3", "TLS 1.0 or newer (3)"],
      ["4", "TLS 1.1 or newer (4)"],
      ["5", "TLS 1.2 or newer (5)"],
    ],
    group: "TLS",
    help: "The oldest TLS version accepted.",
  },
  {
    key: "LOGINNAMEATTRIBUTE",
    type: "text",
    group: "Users",
    help: "The attribute(s) a login is matched against, comma separated.",
  },
  {
    key: "LDAPSEARCHFILTER",
    type: "text",
    group: "Users",
    help: "Which entries are users, e.g. (objectClass=inetOrgPerson).",
  },
  {
    key: "USERINFO",
    type: "textarea",
    rows: 3,
    group: "Users",
    help: 'Tessera attribute → LDAP attribute, as JSON: {"email": "mail", "surname": "sn", …}.',
  },
  {
    key: "UIDTYPE",
    type: "text",
    group: "Users",
    help: "The user id: DN, objectGUID, entryUUID or another attribute.",
  },
  {
    key: "MULTIVALUEATTRIBUTES",
    type: "text",
    group: "Users",
    help: 'Attributes read as lists, as JSON: ["mobile"].',
  },
  {
    key: "TIMEOUT",
    type: "int",
    min: 0.1,
    max: 120,
    step: "any",
    group: "Limits and pool",
    help: "Seconds to wait for a server.",
  },
  {
    key: "SIZELIMIT",
    type: "int",
    min: 1,
    group: "Limits and pool",
    help: "Most entries a search returns.",
  },
  {
    key: "CACHE_TIMEOUT",
    type: "int",
    min: 0,
    group: "Limits and pool",
    help: "Seconds a lookup is cached on each node (0: not at all).",
  },
  {
    key: "SERVERPOOL_STRATEGY",
    type: "select",
    options: ["ROUND_ROBIN", "FIRST", "RANDOM"],
    group: "Limits and pool",
    help: "Which server of the pool is asked first.",
  },
  {
    key: "SERVERPOOL_ROUNDS",
    type: "int",
    min: 1,
    group: "Limits and pool",
    help: "How often the pool is tried before a request fails.",
  },
  {
    key: "SERVERPOOL_SKIP",
    type: "int",
    min: 0,
    group: "Limits and pool",
    help: "Seconds a failing server is skipped.",
  },
  {
    key: "SERVERPOOL_PERSISTENT",
    type: "bool",
    group: "Limits and pool",
    help: "Keep the connections open between requests.",
  },
  {
    key: "EDITABLE",
    type: "bool",
    group: "Writing",
    help: "Users can be added, changed and deleted through Tessera (BINDDN must be allowed to).",
  },
  {
    key: "OBJECT_CLASSES",
    type: "text",
    group: "Writing",
    showIf: on("EDITABLE"),
    help: "Object classes of new entries, e.g. top, inetOrgPerson.",
  },
  {
    key: "DN_TEMPLATE",
    type: "text",
    group: "Writing",
    showIf: on("EDITABLE"),
    help: "The DN of new entries, e.g. uid=<username>,<basedn>.",
  },
  {
    key: "recursive_group_search",
    type: "bool",
    group: "Groups",
    help: "Read each user's groups into a user attribute.",
  },
  {
    key: "group_base_dn",
    type: "text",
    group: "Groups",
    showIf: on("recursive_group_search"),
    help: "Where groups are searched (empty: LDAPBASE).",
  },
  {
    key: "group_search_filter",
    type: "text",
    group: "Groups",
    showIf: on("recursive_group_search"),
    help: "The group filter; {base_dn} and the user's fields ({username}, {userid}, …) are " +
      "filled in.",
  },
  {
    key: "group_name_attribute",
    type: "text",
    group: "Groups",
    showIf: on("recursive_group_search"),
    help: "The attribute that names a group, e.g. cn.",
  },
  {
    key: "group_attribute_mapping_key",
    type: "text",
    group: "Groups",
    showIf: on("recursive_group_search"),
    help: "The user attribute that receives the list, e.g. groups.",
  },
];

// --------------------------------------------------------------------------- HTTP family

const TRUE_FALSE: [string, string] = ["True", "False"];

const CONNECTION = (base: FieldSpec): FieldSpec[] => [
  base,
  {
    key: "timeout",
    type: "int",
    min: 1,
    max: 300,
    group: "Connection",
    help: "Seconds each request may take.",
  },
  {
    key: "verify_tls",
    type: "bool",
    bool: TRUE_FALSE,
    group: "Connection",
    help: "Check the server's TLS certificate.",
  },
  {
    key: "tls_ca_path",
    type: "text",
    group: "Connection",
    help: "PEM bundle of the CAs to trust (empty: the system's CAs).",
  },
];

const MAPPING: FieldSpec = {
  key: "attribute_mapping",
  type: "json",
  rows: 3,
  group: "Users",
  help: 'Tessera attribute → field of the API, as JSON: {"username": "login", "userid": "id"}.',
};

const HEADERS: FieldSpec = {
  key: "headers",
  type: "json",
  rows: 2,
  group: "Connection",
  help: "Headers of every request, as JSON (no credentials: use the service account).",
};

/** The endpoint configurations of an HTTP-family resolver, by operation. */
function endpoints(group: string, editable: boolean): FieldSpec[] {
  const ep = (key: string, label: string, help: string, writes = false): FieldSpec => ({
    key,
    label,
    type: "endpoint",
    group: writes ? "Writing" : group,
    help,
    showIf: writes && editable ? on("Editable") : undefined,
  });
  return [
    ep("config_get_user_by_id", "Get user by ID", "Reads one user; tag {userid}."),
    ep(
      "config_get_user_by_name",
      "Get user by name",
      "Finds a login; tag {username}. The answer's userid is the user's id.",
    ),
    ep("config_get_user_list", "User list", "Lists users; search fields are tags."),
    ep("config_user_auth", "Password check", "Tags {userid}, {username}, {password}."),
    ep("config_create_user", "Create user", "The new user's attributes and {password}.", true),
    ep("config_edit_user", "Edit user", "Tag {userid} and the attributes.", true),
    ep("config_delete_user", "Delete user", "Tag {userid}.", true),
  ];
}

const EDITABLE_HTTP: FieldSpec = {
  key: "Editable",
  type: "bool",
  bool: TRUE_FALSE,
  group: "Writing",
  help: "Users can be added, changed and deleted through Tessera.",
};

const SERVICE_ACCOUNT: FieldSpec[] = [
  {
    key: "username",
    type: "text",
    group: "Service account",
    help: "Sent with the authorization request as {username}.",
  },
  {
    key: "password",
    type: "password",
    group: "Service account",
    help: "Sent as {password}; stored encrypted.",
  },
];

const HTTP: FieldSpec[] = [
  ...CONNECTION({
    key: "base_url",
    type: "url",
    group: "Connection",
    help: "Prefix of the endpoints that are no full URL.",
  }),
  HEADERS,
  ...SERVICE_ACCOUNT,
  {
    key: "config_authorization",
    label: "Authorization",
    type: "endpoint",
    group: "Service account",
    help: "The service token request; its responseMapping gives headers, e.g. " +
      '{"Authorization": "Bearer {access_token}"}.',
  },
  MAPPING,
  ...endpoints("Users", true),
  EDITABLE_HTTP,
  {
    key: "endpoint",
    type: "text",
    group: "Basic mode",
    showIf: (v) => (v.config_get_user_by_id ?? "") === "",
    help: "Definitions from before privacyIDEA 3.12 only: read a user by id, the id being the " +
      "login.",
  },
  {
    key: "method",
    type: "select",
    options: [["", "not set"], "GET", "POST", "PUT", "PATCH", "DELETE"],
    group: "Basic mode",
    showIf: (v) => (v.config_get_user_by_id ?? "") === "",
    help: "The method of the basic mode's request.",
  },
  {
    key: "requestMapping",
    type: "textarea",
    group: "Basic mode",
    showIf: (v) => (v.config_get_user_by_id ?? "") === "",
    help: "The request template with tags.",
  },
  {
    key: "responseMapping",
    type: "textarea",
    group: "Basic mode",
    showIf: (v) => (v.config_get_user_by_id ?? "") === "",
    help: "How to read the answer.",
  },
];

const ENTRA: FieldSpec[] = [
  {
    key: "client_id",
    type: "text",
    required: true,
    group: "App registration",
    help: "The application (client) id.",
  },
  {
    key: "tenant",
    type: "text",
    required: true,
    group: "App registration",
    help: "The directory (tenant) id or domain, e.g. contoso.onmicrosoft.com.",
  },
  {
    key: "authority",
    type: "url",
    group: "App registration",
    help: "Where tokens come from; {tenant} is filled in.",
  },
  {
    key: "client_credential_type",
    type: "select",
    options: ["secret", "certificate"],
    group: "App registration",
    help: "How the app proves itself.",
  },
  {
    key: "client_secret",
    type: "password",
    group: "App registration",
    showIf: (v) => (v.client_credential_type ?? "secret") !== "certificate",
    help: "Stored encrypted.",
  },
  {
    key: "client_certificate",
    type: "object",
    group: "App registration",
    showIf: (v) => v.client_credential_type === "certificate",
    help: "The certificate registered with the app and its private key.",
    fields: [
      {
        key: "private_key_file",
        type: "text",
        help: "PEM file of the RSA private key.",
      },
      {
        key: "certificate_fingerprint",
        type: "text",
        help: "The certificate's SHA-1 thumbprint.",
      },
      {
        key: "private_key_password",
        type: "password",
        help: "Decrypts an encrypted key; stored encrypted.",
      },
    ],
  },
  ...CONNECTION({
    key: "base_url",
    type: "url",
    group: "Connection",
    help: "Microsoft Graph's address.",
  }),
  HEADERS,
  MAPPING,
  ...endpoints("Graph requests", true),
  EDITABLE_HTTP,
];

const KEYCLOAK: FieldSpec[] = [
  ...CONNECTION({
    key: "base_url",
    type: "url",
    group: "Connection",
    help: "Keycloak's address, e.g. https://sso.example.org.",
  }),
  {
    key: "realm",
    type: "text",
    required: true,
    group: "Connection",
    help: "The Keycloak realm; {realm} in every URL.",
  },
  HEADERS,
  ...SERVICE_ACCOUNT,
  {
    key: "config_authorization",
    label: "Authorization",
    type: "endpoint",
    group: "Service account",
    help: "The service account's token request.",
  },
  MAPPING,
  ...endpoints("Keycloak requests", true),
  EDITABLE_HTTP,
];

const SCIM: FieldSpec[] = [
  {
    key: "Authserver",
    type: "url",
    required: true,
    group: "Service",
    help: "The OAuth server: tokens from {Authserver}/oauth/token.",
  },
  {
    key: "Resourceserver",
    type: "url",
    required: true,
    group: "Service",
    help: "The SCIM base URL: users from {Resourceserver}/Users.",
  },
  { key: "Client", type: "text", group: "Service", help: "The client id." },
  { key: "Secret", type: "password", group: "Service", help: "Stored encrypted." },
  {
    key: "Mapping",
    type: "textarea",
    group: "Service",
    help: "privacyIDEA's mapping (YAML); accepted and not used.",
  },
  {
    key: "timeout",
    type: "int",
    min: 1,
    max: 300,
    group: "Connection",
    help: "Seconds each request may take.",
  },
  {
    key: "verify_tls",
    type: "bool",
    bool: TRUE_FALSE,
    group: "Connection",
    help: "Check the server's TLS certificate.",
  },
  {
    key: "tls_ca_path",
    type: "text",
    group: "Connection",
    help: "PEM bundle of the CAs to trust (empty: the system's CAs).",
  },
];

/** The form fields of each resolver type. */
export const RESOLVER_FIELDS: Record<string, FieldSpec[]> = {
  passwdresolver: [
    {
      key: "fileName",
      type: "text",
      required: true,
      group: "File",
      help: "A file in passwd format (relative paths are under the data directory).",
    },
  ],
  ldapresolver: LDAP,
  sqlresolver: SQL,
  httpresolver: HTTP,
  entraidresolver: ENTRA,
  keycloakresolver: KEYCLOAK,
  scimresolver: SCIM,
};

/** The sub-fields of an endpoint configuration. */
export const ENDPOINT_FIELDS: FieldSpec[] = [
  {
    key: "method",
    type: "select",
    options: [["", "not set"], "GET", "POST", "PUT", "PATCH", "DELETE"],
  },
  { key: "endpoint", type: "text", help: "A full URL, or a path after base_url." },
  { key: "headers", type: "textarea", rows: 2, help: "Headers as JSON (empty: the resolver's)." },
  { key: "requestMapping", type: "textarea", rows: 2, help: "The request template with tags." },
  { key: "responseMapping", type: "textarea", rows: 2, help: "How to read the answer." },
  {
    key: "hasSpecialErrorHandler",
    type: "bool",
    bool: ["true", ""],
    help: "An answer containing errorResponse is a failure.",
  },
  { key: "errorResponse", type: "textarea", rows: 2, help: 'e.g. {"success": false}' },
];
