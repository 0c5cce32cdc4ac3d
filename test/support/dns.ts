// A real DNS server on loopback (dns2, UDP), answering TXT records that a test publishes: what a domain owner does at
// their DNS host. One per test process; every app that startApp() boots resolves through it (DNS_SERVERS).
import dns2 from 'dns2';
import { expect } from 'vitest';
import type { ApiClient } from './client.js';

const { Packet } = dns2;
/** RFC 1035 4.1.1: the name does not exist. */
const NXDOMAIN = 3;

export interface TestDns {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  /** Publishes a TXT record (several per name, as DNS allows). */
  publish(name: string, value: string): void;
  /** Removes every TXT record of a name. */
  unpublish(name: string): void;
  /** How many questions the server answered for a name. */
  questions(name: string): number;
}

let shared: Promise<TestDns> | null = null;

export function testDns(): Promise<TestDns> {
  shared ??= start();
  return shared;
}

async function start(): Promise<TestDns> {
  const records = new Map<string, string[]>();
  const asked = new Map<string, number>();
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = (question?.name ?? '').toLowerCase();
      asked.set(name, (asked.get(name) ?? 0) + 1);
      const values = question?.type === Packet.TYPE.TXT ? (records.get(name) ?? []) : [];
      if (!records.has(name)) response.header.rcode = NXDOMAIN;
      for (const data of values)
        response.answers.push({
          name: question!.name,
          type: Packet.TYPE.TXT,
          class: Packet.CLASS.IN,
          ttl: 60,
          data,
        } as unknown as (typeof response.answers)[number]);
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = (addresses as { udp: { port: number } }).udp.port;
  // The server lives as long as the test process; it must not keep the process alive.
  for (const s of Object.values((server as unknown as { servers: Record<string, { unref?: () => void }> }).servers))
    s.unref?.();
  return {
    address: `127.0.0.1:${port}`,
    publish: (name, value) => records.set(name.toLowerCase(), [...(records.get(name.toLowerCase()) ?? []), value]),
    unpublish: (name) => void records.delete(name.toLowerCase()),
    questions: (name) => asked.get(name.toLowerCase()) ?? 0,
  };
}

/** Claims a domain through the API, publishes its TXT record, verifies it: the whole proof, as an owner does it. */
export async function proveDomain(api: ApiClient, domain: string, orgId?: string | null) {
  const dns = await testDns();
  const claim = await api.post('/domains', { domain, ...(orgId ? { orgId } : {}) });
  expect(claim.status, claim.text).toBe(201);
  dns.publish(claim.body.txtName, claim.body.txtValue);
  const verified = await api.post(`/domains/${claim.body.id}/verify`, {});
  expect(verified.status, verified.text).toBe(200);
  return verified.body as { id: string; domain: string; status: 'verified'; txtName: string; txtValue: string };
}
