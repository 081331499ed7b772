/**
 * IPv4 CIDR arithmetic, done here rather than with Terraform's cidrsubnet() so subnet ranges are
 * literal in the synthesized JSON: reviewable in a diff and checkable before anything is applied.
 */
export interface Ipv4Range {
  readonly start: number;
  readonly prefix: number;
}

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

export function parseCidr(cidr: string): Ipv4Range | undefined {
  const m = CIDR.exec(cidr);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const prefix = Number(m[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const start = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  // A range whose address is not its own network address is a typo waiting to become an outage.
  if (start % size !== 0) return undefined;
  return { start, prefix };
}

function format(range: Ipv4Range): string {
  const octets = [24, 16, 8, 0].map((shift) => Math.floor(range.start / 2 ** shift) % 256);
  return `${octets.join('.')}/${range.prefix}`;
}

function mustParse(cidr: string): Ipv4Range {
  const range = parseCidr(cidr);
  if (!range) throw new Error(`not an IPv4 network CIDR: ${cidr}`);
  return range;
}

/** The index-th block of `newBits` more prefix bits inside `cidr`, like Terraform's cidrsubnet(). */
export function subnet(cidr: string, newBits: number, index: number): string {
  const parent = mustParse(cidr);
  const prefix = parent.prefix + newBits;
  if (prefix > 32 || index < 0 || index >= 2 ** newBits) {
    throw new Error(`cannot carve block ${index} of /${prefix} from ${cidr}`);
  }
  return format({ start: parent.start + index * 2 ** (32 - prefix), prefix });
}

export function overlaps(a: string, b: string): boolean {
  const x = mustParse(a);
  const y = mustParse(b);
  const xEnd = x.start + 2 ** (32 - x.prefix);
  const yEnd = y.start + 2 ** (32 - y.prefix);
  return x.start < yEnd && y.start < xEnd;
}
