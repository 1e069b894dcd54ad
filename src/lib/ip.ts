/**
 * IP address helpers over ipaddr.js: CIDR matching and the client address
 * behind trusted proxies.
 *
 * @module
 */
import ipaddr from "ipaddr.js";

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/** Parses an address; IPv4-mapped IPv6 becomes IPv4. Undefined when invalid. */
export function parseIp(text: string): Addr | undefined {
  const t = text.trim().replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(t)) return undefined;
  const a = ipaddr.parse(t);
  if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (a as ipaddr.IPv6).toIPv4Address();
  }
  return a;
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
  let current = parseIp(peer);
  if (!current) return peer;
  if (!forwardedFor || trusted.length === 0) return current.toString();
  const hops = forwardedFor.split(",").map((h) => h.trim()).filter((h) => h !== "");
  while (inAnyNetwork(current, trusted) && hops.length > 0) {
    const next = parseIp(hops.pop()!);
    if (!next) break;
    current = next;
  }
  return current.toString();
}
