/**
 * axe-core in the browser tests: the npm package's `axe.min.js` added to a
 * page with playwright's `addScriptTag`, the WCAG 2.1 A/AA rules, and a rule
 * of our own that axe does not have: the focus ring of the focused element has
 * 3:1 or more against the colours around it (WCAG 1.4.11), measured where the
 * ring is drawn (in the gap of its offset and just outside it) with axe's
 * colour functions.
 *
 * @module
 */
import "axe-core";
import type { Page } from "playwright-core";

/** The file `axe.min.js` of the axe-core package this project pins. */
export const AXE_SCRIPT = new URL("axe.min.js", import.meta.resolve("axe-core")).pathname;

/** The id of the focus ring rule. */
export const FOCUS_RULE = "focus-indicator-contrast";

// runs in the page: registers FOCUS_RULE with axe (functions cannot cross from Deno)
const REGISTER_FOCUS_RULE = `(() => {
  if (window.__focusRuleRegistered) return;
  window.__focusRuleRegistered = true;
  const C = axe.commons.color;
  const colorOf = (text) => new C.Color().parseString(text);
  // the colour seen at (x, y) behind the focused element: the stack composited from the top
  function backgroundAt(x, y, focused) {
    let color;
    for (const el of document.elementsFromPoint(x, y)) {
      if (el === focused || focused.contains(el)) continue;
      const c = colorOf(getComputedStyle(el).backgroundColor);
      if (c.alpha === 0) continue;
      color = color ? C.flattenColors(color, c) : c;
      if (color.alpha >= 1) return color;
    }
    const white = new C.Color(255, 255, 255, 1);
    return color ? C.flattenColors(color, white) : white;
  }
  axe.configure({
    checks: [{
      id: "focus-ring-contrast",
      evaluate(node) {
        const style = getComputedStyle(node);
        const width = parseFloat(style.outlineWidth) || 0;
        if (style.outlineStyle === "none" || width < 2) {
          this.data({ reason: "no outline of 2px or more", outline: style.outline });
          return false;
        }
        const ring = colorOf(style.outlineColor);
        const offset = parseFloat(style.outlineOffset) || 0;
        const r = node.getBoundingClientRect();
        // the gap between the element and its ring, and the first pixel outside the ring
        const distances = offset >= 2 ? [offset / 2, offset + width + 1] : [offset + width + 1];
        let worst = Infinity;
        let against = "";
        for (const d of distances) {
          const points = [
            [r.left - d, r.top + r.height / 2],
            [r.right + d, r.top + r.height / 2],
            [r.left + r.width / 2, r.top - d],
            [r.left + r.width / 2, r.bottom + d],
          ];
          for (const [x, y] of points) {
            if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
            const bg = backgroundAt(x, y, node);
            const contrast = C.getContrast(bg, ring);
            if (contrast < worst) {
              worst = contrast;
              against = bg.toHexString();
            }
          }
        }
        this.data({ contrast: Math.round(worst * 100) / 100, ring: style.outlineColor, against });
        return worst >= 3;
      },
    }],
    rules: [{
      id: "${FOCUS_RULE}",
      selector: "*",
      matches: (node) => node === document.activeElement,
      any: ["focus-ring-contrast"],
      tags: ["wcag21aa", "tessera"],
      metadata: {
        description: "The focus indicator has a contrast of 3:1 or more against adjacent colours",
        help: "Focus rings must be visible (WCAG 1.4.11)",
      },
    }],
  });
})()`;

/** Adds axe-core to the page (once per document) with the focus ring rule. */
export async function installAxe(page: Page): Promise<void> {
  const present = await page.evaluate("typeof window.axe === 'object'");
  if (!present) await page.addScriptTag({ path: AXE_SCRIPT });
  await page.evaluate(REGISTER_FOCUS_RULE);
}

/** One axe finding, short enough to read in a failed assertion. */
export interface Finding {
  rule: string;
  impact: string;
  target: string;
  summary: string;
}

// deno-lint-ignore no-explicit-any
function findingsOf(result: any): Finding[] {
  // deno-lint-ignore no-explicit-any
  return result.violations.flatMap((v: any) =>
    // deno-lint-ignore no-explicit-any
    v.nodes.map((n: any) => ({
      rule: v.id,
      impact: String(v.impact),
      target: n.target.join(" "),
      summary: n.failureSummary ?? "",
    }))
  );
}

/** The WCAG 2.0/2.1 A and AA violations axe finds on the page as it is. */
export async function wcagViolations(page: Page): Promise<Finding[]> {
  await installAxe(page);
  // deno-lint-ignore no-explicit-any
  const result: any = await page.evaluate(`axe.run(document, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    rules: { "${FOCUS_RULE}": { enabled: false } },
  })`);
  // a run that checked nothing would pass any page
  if (result.passes.length < 5) throw new Error(`axe passed only ${result.passes.length} rules`);
  return findingsOf(result);
}

/**
 * The WCAG violations axe finds on the page as lines `where: rule (impact) at target: summary`
 * for an assertion that the list is empty; `seriousOnly` keeps the serious and critical ones.
 */
export async function axe(
  page: Page,
  where = "",
  options: { seriousOnly?: boolean } = {},
): Promise<string[]> {
  const found = await wcagViolations(page);
  const kept = options.seriousOnly
    ? found.filter((v) => v.impact === "serious" || v.impact === "critical")
    : found;
  const prefix = where ? `${where}: ` : "";
  return kept.map((v) => `${prefix}${v.rule} (${v.impact}) at ${v.target}: ${v.summary}`);
}

/** The focus ring rule's verdict on the focused element (empty: it passes). */
export async function focusRingViolations(page: Page): Promise<Finding[]> {
  await installAxe(page);
  const result = await page.evaluate(`(async () => {
    const el = document.activeElement;
    if (!el || el === document.body) return { violations: [] };
    const r = await axe.run(el, { runOnly: { type: "rule", values: ["${FOCUS_RULE}"] } });
    // the data of the check: measured contrast and colours
    for (const v of r.violations) {
      for (const n of v.nodes) {
        const d = n.any[0] && n.any[0].data;
        n.failureSummary = JSON.stringify(d) + " " + el.outerHTML.slice(0, 120);
      }
    }
    if (r.passes.length === 0 && r.violations.length === 0) {
      return { violations: [{ id: "${FOCUS_RULE}", impact: "not applied",
        nodes: [{ target: [el.tagName], failureSummary: "the rule did not run" }] }] };
    }
    return r;
  })()`);
  return findingsOf(result);
}
