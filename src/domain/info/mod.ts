/**
 * News feeds for the web interface (`GET /info/rss`, spec 14 §15): the RSS feeds a webui policy
 * names (else privacyIDEA's three), fetched at request time and cut to the items of the last
 * `rss_age` days. A feed that cannot be fetched or read is left out of the answer.
 *
 * @module
 */
import { readBodyPrefix } from "../../lib/read_body.ts";
import type { Deps } from "../../deps.ts";
import { ParameterError } from "../../errors.ts";
import { child, childrenNamed, parseXml, textOf } from "../../lib/xml.ts";
import { loadPolicySet, userAgentName } from "../policy/mod.ts";
import { callerConditionData, type WebuiCaller, type WebuiRequest } from "../webui/mod.ts";

/** privacyIDEA's feeds without an `rss_feeds` policy (privacyidea/lib/info/rss.py). */
export const RSS_FEEDS_DEFAULT: Readonly<Record<string, string>> = {
  "Community News": "https://community.privacyidea.org/c/news.rss",
  "privacyIDEA News": "https://privacyidea.org/feed",
  "NetKnights News": "https://netknights.it/en/feed",
};

/** News days without an `rss_age` policy: admins see half a year, users none. */
const RSS_AGE_DEFAULT = { admin: 180, user: 0 } as const;

/** Limits of one feed fetch: the server fetches URLs a policy writer chose. */
export const RSS_FETCH_LIMITS = { timeoutMs: 5000, maxBytes: 2 * 1024 * 1024 } as const;

/** One news item as privacyIDEA answers it (`pub_date` as written in the feed). */
export interface NewsItem {
  title: string;
  link: string;
  pub_date: string;
  summary: string;
}

/**
 * An `rss_feeds` value `'Title':'URL'-'Title':'URL'` as a title → URL map (privacyIDEA's
 * `convert_action_dict_to_python_dict`: a pair without `':'` is skipped).
 */
export function parseFeedList(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of value.split("'-'")) {
    const parts = pair.split("':'");
    if (parts.length !== 2) continue;
    const key = parts[0].startsWith("'") ? parts[0].slice(1) : parts[0];
    const url = parts[1].endsWith("'") ? parts[1].slice(0, -1) : parts[1];
    out[key] = url;
  }
  return out;
}

/** The webui policies about the news of `who`: the age in days and the feeds. */
export async function rssSettings(
  deps: Deps,
  who: WebuiCaller,
  req: WebuiRequest = {},
): Promise<{ age: number; feeds: Record<string, string>; policies: string[] }> {
  const set = await loadPolicySet(deps);
  // privacyIDEA matches with the request's user object: the user, or none for an admin
  const isUser = who.role === "user";
  const m = set.matcher({
    scope: "webui",
    user: isUser ? who.username : "",
    realm: isUser ? who.realm : "",
    resolver: isUser ? who.resolver || null : "",
    client: req.client || null,
    userAgent: req.userAgent == null ? null : userAgentName(req.userAgent),
    conditions: callerConditionData(deps, who, req.conditions),
  });
  const age = await m.values("rss_age", { unique: true });
  const feeds = await m.values("rss_feeds", { unique: true, freeText: true });
  const raw = age.values[0]?.trim();
  return {
    age: raw !== undefined && /^[+-]?\d+$/.test(raw)
      ? Number.parseInt(raw, 10)
      : RSS_AGE_DEFAULT[who.role],
    // privacyIDEA takes the policy only when it names exactly one value
    feeds: feeds.values.length === 1 ? parseFeedList(feeds.values[0]) : { ...RSS_FEEDS_DEFAULT },
    policies: [...new Set([...age.policies, ...feeds.policies])],
  };
}

/**
 * The news of each feed (or of `channel` alone), items newer than `age` days. Age 0 or less
 * fetches nothing: every channel answers `[]`. An unknown channel is a parameter error
 * (privacyIDEA fails with HTTP 500).
 */
export async function getNews(
  feeds: Record<string, string>,
  age: number,
  options: { channel?: string; now: number; fetchFn?: typeof fetch },
): Promise<Record<string, NewsItem[]>> {
  const { channel, fetchFn = fetch } = options;
  let chosen = feeds;
  if (channel) {
    if (!Object.hasOwn(feeds, channel)) {
      throw new ParameterError(`Unknown channel ${JSON.stringify(channel)}`);
    }
    chosen = { [channel]: feeds[channel] };
  }
  const out: Record<string, NewsItem[]> = {};
  if (age <= 0) {
    for (const title of Object.keys(chosen)) out[title] = [];
    return out;
  }
  const since = options.now - age * 86_400_000;
  const read = await Promise.all(
    Object.entries(chosen).map(async ([title, url]) => {
      try {
        return [title, newsSince(parseRss(await fetchFeed(url, fetchFn)), since)] as const;
      } catch {
        return [title, undefined] as const;
      }
    }),
  );
  for (const [title, items] of read) if (items) out[title] = items;
  return out;
}

/** Fetches a feed's text: http(s) only, within the time and size limits. */
async function fetchFeed(url: string, fetchFn: typeof fetch): Promise<string> {
  const u = new URL(url);
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not an http(s) URL");
  const res = await fetchFn(u, {
    signal: AbortSignal.timeout(RSS_FETCH_LIMITS.timeoutMs),
    redirect: "follow",
  });
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new Error(`HTTP ${res.status}`);
  }
  // reading stops at the limit: a huge answer costs no more memory than that
  const { text, isTruncated } = await readBodyPrefix(res, RSS_FETCH_LIMITS.maxBytes);
  if (isTruncated) throw new Error("feed too large");
  return text;
}

/** The items of an RSS 2.0 document; an item without a readable `pubDate` fails the feed. */
function parseRss(text: string): { item: NewsItem; time: number }[] {
  const root = parseXml(text);
  if (root.name !== "rss") throw new Error("not an RSS document");
  const channel = child(root, "channel");
  if (!channel) throw new Error("no channel");
  return childrenNamed(channel, "item").map((el) => {
    const pubDate = textOf(child(el, "pubdate")).trim();
    const time = Date.parse(pubDate);
    // as privacyIDEA: an entry without a date makes the whole feed fail
    if (Number.isNaN(time)) throw new Error("item without a date");
    return {
      item: {
        title: textOf(child(el, "title")).trim(),
        link: textOf(child(el, "link")).trim(),
        pub_date: pubDate,
        summary: textOf(child(el, "description")).trim(),
      },
      time,
    };
  });
}

/** The items published after `since` (ms), in the feed's order. */
function newsSince(items: { item: NewsItem; time: number }[], since: number): NewsItem[] {
  return items.filter((i) => i.time > since).map((i) => i.item);
}
