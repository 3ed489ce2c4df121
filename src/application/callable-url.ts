import { invalid } from '../domain/domain-error.ts';
import { assertOutboundAllowed, OutboundRefusedError, type OutboundPolicy, type Resolver } from '../security/ssrf-guard.ts';

/**
 * A URL someone else chose that the service will call later (a webhook receiver, a chat notification): refused
 * when it is set, with a VALIDATION_ERROR naming `field`, when the SSRF guard would refuse it at call time
 * (loopback, private, link-local, metadata or unresolvable hosts, unless OUTBOUND_ALLOWLIST allows them). The
 * guard checks again at every call (DNS rebinding).
 */
export async function assertCallableUrl(field: string, url: string, outbound: { policy: OutboundPolicy; resolve?: Resolver | undefined }, what: string): Promise<void> {
  try {
    await assertOutboundAllowed(new URL(url), outbound.policy, outbound.resolve);
  } catch (error) {
    if (error instanceof OutboundRefusedError) {
      throw invalid(`${field}: ${error.message}`, error.reason === 'unresolvable' ? 'Check the host name.' : `${what} may only reach public addresses unless OUTBOUND_ALLOWLIST allows the host.`);
    }
    throw error;
  }
}
