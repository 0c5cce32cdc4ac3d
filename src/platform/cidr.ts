// CIDR allow-lists (IPv4 and IPv6, ipaddr.js): the one matcher of API keys' lists and tenants' IP allow-lists.
import ipaddr from 'ipaddr.js';

/** A CIDR block normalised (`10.0.0.1/8` → `10.0.0.0/8`, IPv6 compressed), or null when it is not one. */
export function normaliseCidr(cidr: string): string | null {
  const c = cidr.trim();
  // Dotted quads only: ipaddr.js also reads `10.1/8` or `0x0a.0.0.0/8`, which nobody means in an allow-list.
  const v4 = ipaddr.IPv4.isValidCIDRFourPartDecimal(c);
  if (!v4 && !(c.includes(':') && ipaddr.IPv6.isValidCIDR(c))) return null;
  const bits = Number(c.slice(c.lastIndexOf('/') + 1));
  const network = v4 ? ipaddr.IPv4.networkAddressFromCIDR(c) : ipaddr.IPv6.networkAddressFromCIDR(c);
  return `${network.toString()}/${bits}`;
}

/** The client address as one form: an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) counts as IPv4. */
export function normaliseIp(ip: string): string | null {
  const known = normalised.get(ip);
  if (known !== undefined) return known;
  const form = ipaddr.isValid(ip) ? ipaddr.process(ip).toString() : null;
  // Every authenticated request normalises its client's address: the few addresses a busy instance sees repeat.
  if (normalised.size >= NORMALISED_MAX) normalised.clear();
  normalised.set(ip, form);
  return form;
}
const NORMALISED_MAX = 4096;
const normalised = new Map<string, string | null>();

/** Whether `ip` lies in one of the blocks; an empty list allows every address. */
export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  if (!ipaddr.isValid(ip)) return false;
  const addr = ipaddr.process(ip);
  return cidrs.some((c) => {
    try {
      const range = ipaddr.parseCIDR(c);
      return range[0].kind() === addr.kind() && addr.match(range);
    } catch {
      return false;
    }
  });
}
