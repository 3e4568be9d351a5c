/**
 * Which addresses web_fetch may connect to. By default only public ones:
 * loopback, private, link-local (cloud metadata at 169.254.169.254), shared
 * (carrier-grade NAT), unspecified, multicast, broadcast, documentation and
 * reserved ranges are refused, so a URL the model chose cannot reach the
 * services of the machine or the network the server runs in — agentwire's
 * own /metrics among them. `tools.web.allowPrivateNetwork` opens all of
 * them (true) or some (a list of addresses, CIDR ranges and host names).
 *
 * The check is made on the address actually connected to: a literal IP host
 * is checked before the request (Node connects to it without a lookup), any
 * other host inside the socket's own DNS lookup (NetworkPolicy.lookup), so
 * no separate resolve-then-connect leaves room for DNS rebinding.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { ToolConfigError } from "../tool-config-error.js";

/** The config value: true opens every non-public range; a list opens the ones it names. */
export type AllowPrivateNetwork = boolean | readonly string[];

export const ALLOW_PRIVATE_NETWORK_SETTING = "tools.web.allowPrivateNetwork";

type Family = "ipv4" | "ipv6";

/**
 * The refused ranges, each with the word the model is told. The first match
 * names the address, so narrower ranges come before wider ones.
 */
const REFUSED_V4: readonly (readonly [label: string, network: string, prefix: number])[] = [
  // "This network": Linux connects 0.0.0.0 to the local host.
  ["unspecified", "0.0.0.0", 8],
  ["private", "10.0.0.0", 8],
  ["shared (carrier-grade NAT)", "100.64.0.0", 10],
  ["loopback", "127.0.0.0", 8],
  ["link-local", "169.254.0.0", 16],
  ["private", "172.16.0.0", 12],
  ["reserved", "192.0.0.0", 24],
  ["documentation", "192.0.2.0", 24],
  ["reserved", "192.88.99.0", 24],
  ["private", "192.168.0.0", 16],
  ["reserved", "198.18.0.0", 15],
  ["documentation", "198.51.100.0", 24],
  ["documentation", "203.0.113.0", 24],
  ["multicast", "224.0.0.0", 4],
  // 240/4 holds the broadcast address 255.255.255.255.
  ["reserved", "240.0.0.0", 4],
];

const REFUSED_V6: readonly (readonly [label: string, network: string, prefix: number])[] = [
  ["unspecified", "::", 128],
  ["loopback", "::1", 128],
  // IPv4-compatible addresses (deprecated): ::7f00:1 is 127.0.0.1 to some stacks.
  ["reserved", "::", 96],
  ["reserved", "64:ff9b:1::", 48],
  ["reserved", "100::", 64],
  ["reserved", "2001::", 23],
  ["documentation", "2001:db8::", 32],
  ["private", "fc00::", 7],
  ["link-local", "fe80::", 10],
  ["private", "fec0::", 10],
  ["multicast", "ff00::", 8],
];

/**
 * IPv6 prefixes that carry an IPv4 address a gateway connects to (NAT64,
 * 6to4): the IPv4 ranges above are refused inside them too. IPv4-mapped
 * addresses (::ffff:127.0.0.1) need nothing here: BlockList matches them
 * against the IPv4 rules itself.
 */
const EMBEDDING_V6: readonly (readonly [prefix: (v4: number[]) => string, bits: number])[] = [
  [(b) => `64:ff9b::${hex16(b[0]!, b[1]!)}:${hex16(b[2]!, b[3]!)}`, 96],
  [(b) => `2002:${hex16(b[0]!, b[1]!)}:${hex16(b[2]!, b[3]!)}::`, 16],
];

function hex16(high: number, low: number): string {
  return ((high << 8) | low).toString(16);
}

/** One BlockList per label, in the order they are asked. */
const REFUSED: readonly { label: string; list: BlockList }[] = (() => {
  const byLabel = new Map<string, BlockList>();
  const listFor = (label: string) => {
    let list = byLabel.get(label);
    if (!list) byLabel.set(label, (list = new BlockList()));
    return list;
  };
  for (const [label, network, prefix] of REFUSED_V4) {
    const list = listFor(label);
    list.addSubnet(network, prefix, "ipv4");
    const bytes = network.split(".").map(Number);
    for (const [embed, bits] of EMBEDDING_V6) list.addSubnet(embed(bytes), bits + prefix, "ipv6");
  }
  for (const [label, network, prefix] of REFUSED_V6) listFor(label).addSubnet(network, prefix, "ipv6");
  return [...byLabel].map(([label, list]) => ({ label, list }));
})();

/** What kind of non-public address this is ("loopback", "private", …), or null for a public one. */
export function nonPublicKind(address: string): string | null {
  const family = familyOf(address);
  if (family === null) return "invalid";
  for (const { label, list } of REFUSED) if (list.check(address, family)) return label;
  return null;
}

function familyOf(address: string): Family | null {
  const version = isIP(address);
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : null;
}

/** What the model is told when a fetch is refused: the host, the address, the setting. */
export class PrivateAddressRefused extends Error {
  override name = "PrivateAddressRefused";
  readonly code = "EPRIVATEADDRESS";
}

interface HostRule {
  /** Lower-case, without a trailing dot. */
  name: string;
  port?: number;
}

interface AddressRule {
  list: BlockList;
  port?: number;
}

export class NetworkPolicy {
  private constructor(
    /** true: every address is allowed (the check is off). */
    private readonly allowAll: boolean,
    private readonly hosts: readonly HostRule[],
    private readonly addresses: readonly AddressRule[],
  ) {}

  /**
   * The policy for a config value. A list entry that is not an address, a
   * CIDR range or a host name is a ToolConfigError naming it.
   */
  static from(allow: AllowPrivateNetwork | undefined): NetworkPolicy {
    if (allow === true) return new NetworkPolicy(true, [], []);
    if (!allow) return new NetworkPolicy(false, [], []);
    const hosts: HostRule[] = [];
    const addresses: AddressRule[] = [];
    allow.forEach((entry, index) => {
      const rule = parseEntry(entry);
      if (typeof rule === "string") {
        throw new ToolConfigError(`${ALLOW_PRIVATE_NETWORK_SETTING}[${index}]: ${JSON.stringify(entry)} ${rule}`);
      }
      if ("name" in rule) hosts.push(rule);
      else addresses.push(rule);
    });
    return new NetworkPolicy(false, hosts, addresses);
  }

  /** Some non-public address can be reached: a fetch may then touch local services. */
  get opensPrivateNetwork(): boolean {
    return this.allowAll || this.hosts.length > 0 || this.addresses.length > 0;
  }

  /**
   * Null when a connection to `address` for a URL naming `host` (an IP
   * literal or a name, without brackets) and `port` is allowed, else the
   * refusal. `host` equal to `address` means a literal.
   */
  refusal(host: string, port: number, address: string): PrivateAddressRefused | null {
    if (this.allowAll) return null;
    const kind = nonPublicKind(address);
    if (kind === null || this.allows(host, port, address)) return null;
    return this.refused(host, port, [{ address, kind }]);
  }

  /**
   * The socket's DNS lookup for one URL: resolves every address of the
   * name, keeps the allowed ones, and fails with the refusal when none is
   * left — the address Node then connects to is one that was checked.
   */
  lookup(host: string, port: number): LookupFunction {
    return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void) => {
      dnsLookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
        if (error) return callback(error);
        const kept = this.allowAll ? found : found.filter(({ address }) => this.refusal(host, port, address) === null);
        if (kept.length === 0) {
          const refused = found.map(({ address }) => ({ address, kind: nonPublicKind(address) ?? "public" }));
          return callback(this.refused(host, port, refused));
        }
        if (options.all) return callback(null, kept);
        return callback(null, kept[0]!.address, kept[0]!.family);
      });
    }) as LookupFunction;
  }

  private allows(host: string, port: number, address: string): boolean {
    const name = host.toLowerCase().replace(/\.$/, "");
    if (this.hosts.some((rule) => rule.name === name && (rule.port === undefined || rule.port === port))) return true;
    const family = familyOf(address)!;
    return this.addresses.some((rule) => (rule.port === undefined || rule.port === port) && rule.list.check(address, family));
  }

  private refused(host: string, port: number, found: readonly { address: string; kind: string }[]): PrivateAddressRefused {
    const literal = found.length === 1 && found[0]!.address === host;
    const shown = found.slice(0, 3).map(({ address, kind }) => `${address} (${kind})`);
    if (found.length > 3) shown.push(`${found.length - 3} more`);
    const what = literal
      ? `${host} is ${withArticle(found[0]!.kind)} address`
      : found.length === 1
        ? `${host} resolves to ${found[0]!.address}, ${withArticle(found[0]!.kind)} address`
        : `${host} resolves to ${shown.join(", ")}, none of them allowed`;
    const first = found.find((f) => f.kind !== "public")?.address ?? found[0]!.address;
    const example = `${isIP(first) === 6 ? `[${first}]` : first}:${port}`;
    return new PrivateAddressRefused(
      `Refused: ${what}. web_fetch does not connect to loopback, private, link-local or other non-public addresses ` +
        `unless the server's setting ${ALLOW_PRIVATE_NETWORK_SETTING} allows it (true, or a list of addresses, ranges and host names such as ["${example}"]).`,
    );
  }
}

function withArticle(word: string): string {
  return `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;
}

/**
 * One allow-list entry: "10.0.0.0/8", "fd00::/8" (a CIDR range), "127.0.0.1",
 * "::1" (an address), "wiki.internal", "localhost" (a host name, as the URL
 * spells it: every address it resolves to is allowed), each but a range
 * optionally with ":PORT" ("127.0.0.1:8080", "[::1]:8080", "localhost:11434").
 * Returns the rule, or what is wrong with the entry.
 */
function parseEntry(entry: string): HostRule | AddressRule | string {
  const text = entry.trim();
  const slash = text.indexOf("/");
  if (slash >= 0) {
    const network = text.slice(0, slash);
    const family = familyOf(network);
    const bits = text.slice(slash + 1);
    if (family === null) return "is not a CIDR range: the part before / is not an IP address";
    const max = family === "ipv4" ? 32 : 128;
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `is not a CIDR range: the prefix length must be 0 to ${max}`;
    const list = new BlockList();
    list.addSubnet(network, Number(bits), family);
    return { list };
  }
  if (familyOf(text) === "ipv6") return addressRule(text, undefined);
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) return "is not an address, a CIDR range or a host name (with an optional :PORT)";
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return "has a port outside 1 to 65535";
  let host: string;
  try {
    // The URL parser spells the host as a fetched URL will (lower case, 0x7f.1 → 127.0.0.1).
    host = new URL(`http://${match[1]}/`).hostname;
  } catch {
    return "is not an address, a CIDR range or a host name (with an optional :PORT)";
  }
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  if (familyOf(bare) !== null) return addressRule(bare, port);
  return { name: bare.replace(/\.$/, ""), ...(port === undefined ? {} : { port }) };
}

function addressRule(address: string, port: number | undefined): AddressRule {
  const list = new BlockList();
  list.addAddress(address, familyOf(address)!);
  return { list, ...(port === undefined ? {} : { port }) };
}
