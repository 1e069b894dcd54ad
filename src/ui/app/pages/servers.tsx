/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * RADIUS, SMTP and privacyIDEA server definitions.
 *
 * @module
 */
import { type DefinitionKind, DefinitionsPage, itemPath } from "./definitions.tsx";

const RADIUS: DefinitionKind = {
  title: "RADIUS servers",
  noun: "RADIUS server",
  listPath: "/radiusserver/",
  itemPath: itemPath("/radiusserver/"),
  fields: {
    "": [
      { key: "server", label: "Server", required: true },
      { key: "port", label: "Port", type: "number", default: "1812" },
      { key: "secret", label: "Secret", type: "password", required: true },
      { key: "dictionary", label: "Dictionary", default: "/etc/privacyidea/dictionary" },
      { key: "description", label: "Description" },
      { key: "timeout", label: "Timeout (seconds)", type: "number", default: "5" },
      { key: "retries", label: "Retries", type: "number", default: "3" },
    ],
  },
  columns: [
    { key: "server", label: "Server" },
    { key: "port", label: "Port" },
    { key: "description", label: "Description" },
  ],
  readRight: "radiusserver_read",
  writeRight: "radiusserver_write",
  deleteRight: "radiusserver_write",
  test: {
    label: "Send a test request",
    path: "/radiusserver/test_request",
    fields: [
      { key: "username", label: "Test user" },
      { key: "password", label: "Test password", type: "password" },
    ],
  },
};

const SMTP: DefinitionKind = {
  title: "SMTP servers",
  noun: "SMTP server",
  listPath: "/smtpserver/",
  itemPath: itemPath("/smtpserver/"),
  fields: {
    "": [
      { key: "server", label: "Server", required: true },
      { key: "port", label: "Port", type: "number", default: "25" },
      { key: "tls", label: "Use TLS", type: "bool", default: "0" },
      { key: "username", label: "Username" },
      { key: "password", label: "Password", type: "password" },
      { key: "sender", label: "Sender address" },
      { key: "description", label: "Description" },
      { key: "timeout", label: "Timeout (seconds)", type: "number", default: "10" },
      { key: "enqueue_job", label: "Send through the job queue", type: "bool", default: "0" },
    ],
  },
  columns: [
    { key: "server", label: "Server" },
    { key: "port", label: "Port" },
    { key: "sender", label: "Sender" },
    { key: "description", label: "Description" },
  ],
  readRight: "smtpserver_read",
  writeRight: "smtpserver_write",
  deleteRight: "smtpserver_write",
  test: {
    label: "Send a test email",
    path: "/smtpserver/send_test_email",
    fields: [{ key: "recipient", label: "Recipient" }],
  },
};

const PRIVACYIDEA: DefinitionKind = {
  title: "privacyIDEA servers",
  noun: "privacyIDEA server",
  listPath: "/privacyideaserver/",
  itemPath: itemPath("/privacyideaserver/"),
  fields: {
    "": [
      { key: "url", label: "URL", required: true },
      { key: "tls", label: "Verify the TLS certificate", type: "bool", default: "1" },
      { key: "description", label: "Description" },
    ],
  },
  columns: [
    { key: "url", label: "URL" },
    { key: "description", label: "Description" },
  ],
  readRight: "privacyideaserver_read",
  writeRight: "privacyideaserver_write",
  deleteRight: "privacyideaserver_write",
  test: {
    label: "Send a test request",
    path: "/privacyideaserver/test_request",
    fields: [
      { key: "username", label: "Test user" },
      { key: "password", label: "Test password", type: "password" },
    ],
  },
};

/** `#/radius`. */
export function RadiusPage() {
  return <DefinitionsPage kind={RADIUS} />;
}

/** `#/smtp`. */
export function SmtpPage() {
  return <DefinitionsPage kind={SMTP} />;
}

/** `#/privacyidea`: the remote servers the Federation event handler forwards to. */
export function PrivacyideaServersPage() {
  return <DefinitionsPage kind={PRIVACYIDEA} />;
}
