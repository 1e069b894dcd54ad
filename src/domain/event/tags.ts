/**
 * Python `str.format`-style templates with named tags (`{serial}`, `{{` → `{`).
 *
 * @module
 */

/** An unknown or malformed tag in a template. */
export class TemplateError extends Error {}

const TAG_REGEXP = /\{\{|\}\}|\{([^{}]*)\}|[{}]/g;

/**
 * Replaces `{name}` by `tags[name]`. Undefined/null values become `none`
 * ("None" like Python, or "" for webhooks). An unknown tag throws.
 */
export function formatTemplate(
  template: string,
  tags: Record<string, string | number | null | undefined>,
  options: { none?: string; escape?: (s: string) => string } = {},
): string {
  const none = options.none ?? "None";
  return template.replace(TAG_REGEXP, (m, name: string | undefined) => {
    if (m === "{{") return "{";
    if (m === "}}") return "}";
    if (name === undefined) throw new TemplateError(`Single '${m}' encountered in format string`);
    // "{name:fmt}" and "{name!r}" keep only the name, as str.format would
    const key = name.split(/[:!]/)[0];
    if (!Object.hasOwn(tags, key)) throw new TemplateError(`Unknown tag "${key}"`);
    const v = tags[key];
    const s = v === undefined || v === null ? none : String(v);
    return options.escape ? options.escape(s) : s;
  });
}

/** HTML-escapes a tag value (mimetype html). */
export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" })[c]!,
  );
}
