/**
 * `GET /system/documentation` (spec 14 §20.1): the configuration of this
 * Tessera as one reStructuredText document, with privacyIDEA's headings —
 * the configuration file (privacyIDEA's PI.cfg), local admins, system
 * configuration, resolvers, realms, policies.
 *
 * It shows what the read routes show and no more: secrets as `__CENSORED__`
 * (system config, resolvers), the database URL never (it may hold the
 * database's credentials), the metrics token and RADIUS secrets as
 * "redacted", as privacyIDEA redacts PI_PEPPER and hides the SQL URI.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { CONFIG_SCHEMA } from "../../config.ts";
import { listAdmins } from "../admin/mod.ts";
import { listPolicies } from "../policy/mod.ts";
import { listRealms } from "../realm/mod.ts";
import { listResolvers } from "../resolver/mod.ts";
import { readSystemConfig } from "../system_config/mod.ts";

/** Config file keys never shown, and why (`section.key`). */
const HIDDEN_KEYS: Readonly<Record<string, string>> = {
  "storage.database_url": "not shown: the database URL may hold the database's credentials",
};
/** Config file keys shown as redacted when set. */
const REDACTED_KEYS = new Set(["metrics.token"]);

/** `text` safe inside rST inline markup (`**…**`) and on one line. */
function inline(text: string): string {
  return text.replace(/[\r\n]+/g, " ").replace(/([\\*`|_])/g, "\\$1");
}

/** A heading underlined with `mark` (rST needs the line at least as long as the title). */
function heading(title: string, mark: string): string {
  const text = inline(title);
  return `${text}\n${mark.repeat(Math.max(text.length, 3))}\n`;
}

/** `key: **value**` as privacyIDEA's template writes its values. */
function entry(key: string, value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  return text === "" ? `${inline(key)}: (empty)\n` : `${inline(key)}: **${inline(text)}**\n`;
}

function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The configuration file's sections as this server runs them (defaults included). */
function configFileSection(deps: Deps): string[] {
  const out = [heading("Configuration file (tessera.toml; privacyIDEA's PI.cfg)", "-"), ""];
  const running = deps.config as unknown as Record<string, Record<string, unknown>>;
  for (const [section, keys] of Object.entries(CONFIG_SCHEMA)) {
    for (const key of Object.keys(keys)) {
      const name = `${section}.${key}`;
      const value = running[camel(section)]?.[camel(key)];
      if (Object.hasOwn(HIDDEN_KEYS, name)) {
        out.push(`${inline(name)}: ${HIDDEN_KEYS[name]}\n`);
      } else if (REDACTED_KEYS.has(name)) {
        out.push(
          value === "" || value === undefined ? entry(name, "") : `${inline(name)}: **redacted**\n`,
        );
      } else if (name === "radius.clients") {
        const clients = (value ?? []) as { address?: string; name?: string }[];
        out.push(
          entry(
            name,
            clients.map((c) => `${c.name ?? ""} ${c.address ?? ""} (secret redacted)`.trim()).join(
              ", ",
            ),
          ),
        );
      } else out.push(entry(name, value));
    }
  }
  return out;
}

/**
 * The document, dated `now` (the server's clock, minutes, UTC) for the node
 * `deps.nodeName`.
 */
export async function configurationDocument(deps: Deps): Promise<string> {
  const now = new Date(deps.clock.now()).toISOString();
  const lines: string[] = [
    heading("Tessera configuration documentation", "="),
    "",
    `* System: ${inline(deps.nodeName)}`,
    `* Date: ${now.slice(0, 10)} ${now.slice(11, 16)} UTC`,
    "",
    ...configFileSection(deps),
    "",
    heading("Local Admins", "-"),
    "The following administrators are defined in the database (besides the users of",
    "the realms named in auth.superuser_realms):",
    "",
  ];
  for (const a of await listAdmins(deps)) {
    lines.push(`* **${inline(a.username)}**${a.email ? ` <${inline(a.email)}>` : ""}`);
  }
  lines.push("", heading("System Base Configuration", "-"), "");
  const system = await readSystemConfig(deps) as Record<string, string>;
  for (const key of Object.keys(system).sort()) lines.push(entry(key, system[key]));

  lines.push("", heading("Resolver Configuration", "-"));
  lines.push("The following resolvers are defined. Resolvers are connections to user stores.", "");
  const resolvers = await listResolvers(deps);
  for (const name of Object.keys(resolvers).sort()) {
    const r = resolvers[name];
    lines.push(heading(name, "~"), `* Name of the resolver: ${inline(name)}`);
    lines.push(`* Type of the resolver: ${inline(r.type)}`, "", heading("Configuration", "."));
    for (const key of Object.keys(r.data).sort()) lines.push(entry(key, r.data[key]));
    lines.push("");
  }

  lines.push("", heading("Realm Configuration", "-"));
  lines.push("Several resolvers are grouped into realms. The following realms are defined:", "");
  const realms = await listRealms(deps);
  for (const name of Object.keys(realms).sort()) {
    const realm = realms[name];
    lines.push(heading(name, "~"), `* Name of the realm: ${inline(name)}`, "");
    if (realm.default) {
      lines.push("**This is the default realm!**", "");
      lines.push("Users in the default realm can authenticate without specifying the realm.", "");
    }
    lines.push("The following resolvers are configured in this realm:", "");
    for (const r of realm.resolver) {
      lines.push(`* Name: ${inline(r.name)}`, `  Priority: ${r.priority ?? ""}`);
      lines.push(`  Type: ${inline(r.type)}`);
      if (r.node) lines.push(`  Node: ${inline(r.node)}`);
    }
    lines.push("");
  }

  lines.push("", heading("Policy Configuration", "-"));
  lines.push("Policies define the behaviour of Tessera. The following policies are defined:", "");
  for (const p of await listPolicies(deps)) {
    lines.push(heading(p.name, "~"));
    const { name: _name, id: _id, ...fields } = p;
    for (const key of Object.keys(fields).sort()) {
      lines.push(entry(key, (fields as Record<string, unknown>)[key]));
    }
    lines.push("");
  }
  // three or more line breaks become two, as privacyIDEA's answer has them
  return lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}
