/**
 * IP address helpers over ipaddr.js: CIDR matching and the client address
 * behind trusted proxies.
 *
 * @module
 */
import ipaddr from "ipaddr.js";

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

// Every request parses its peer address (and policies its client address): the
// answers for recent short texts are kept (bounded; parsed addresses are never mutated).
const MEMO_MAX = 1024;
const MEMO_TEXT_MAX = 64;
const parsedMemo = new Map<string, Addr | undefined>();
const textMemo = new Map<string, string>();

function remember<V>(memo: Map<string, V>, key: string, value: V): V {
  if (key.length > MEMO_TEXT_MAX) return value;
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(key, value);
  return value;
}

/** Parses an address; IPv4-mapped IPv6 becomes IPv4. Undefined when invalid. */
export function parseIp(text: string): Addr | undefined {
  const hit = parsedMemo.get(text);
  if (hit !== undefined || parsedMemo.has(text)) return hit;
  const t = text.trim().replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(t)) return remember(parsedMemo, text, undefined);
  let a: Addr = ipaddr.parse(t);
  if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) {
    a = (a as ipaddr.IPv6).toIPv4Address();
  }
  return remember(parsedMemo, text, a);
}

/** A parsed network: address and prefix length. */
export type Network = [Addr, number];

/** Parses `a.b.c.d`, `a.b.c.d/n`, IPv6 or IPv6/n. Undefined when invalid. */
export function parseNetwork(text: string): Network | undefined {
  const t = text.trim();
  if (t.includes("/")) {
    try {
      const [addr, bits] = ipaddr.parseCIDR(t);
      if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)];
      }
      return [addr, bits];
    } catch {
      return undefined;
    }
  }
  const a = parseIp(t);
  return a ? [a, a.kind() === "ipv4" ? 32 : 128] : undefined;
}

/** True when `ip` lies in `net`. */
export function inNetwork(ip: Addr, net: Network): boolean {
  return ip.kind() === net[0].kind() && ip.match(net as [never, number]);
}

/** True when `ip` lies in any of the networks. */
export function inAnyNetwork(ip: Addr, nets: readonly Network[]): boolean {
  return nets.some((n) => inNetwork(ip, n));
}

/**
 * The client address of a request: the peer, or, when the peer is a trusted
 * proxy, the right-most `X-Forwarded-For` entry that is not itself trusted.
 */
export function clientAddress(
  peer: string,
  forwardedFor: string | undefined,
  trusted: readonly Network[],
): string {
  if (!forwardedFor || trusted.length === 0) {
    const known = textMemo.get(peer);
    if (known !== undefined) return known;
    return remember(textMemo, peer, parseIp(peer)?.toString() ?? peer);
  }
  let current = parseIp(peer);
  if (!current) return peer;
  const hops = forwardedFor.split(",").map((h) => h.trim()).filter((h) => h !== "");
  while (inAnyNetwork(current, trusted) && hops.length > 0) {
    const next = parseIp(hops.pop()!);
    if (!next) break;
    current = next;
  }
  return current.toString();
}
