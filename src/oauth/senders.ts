// What a token may be bound to, checked once per compiled config for the token endpoint and the
// routes alike: one cache of DPoP proof keys, one reading of each connection's certificate.
import type { KeyObject } from 'node:crypto';
import type { Config } from '../config/load.ts';
import { createReadClientCertificate, type ReadClientCertificate } from '../http/client-certificate.ts';
import { createPublicOrigin } from '../http/origin.ts';
import type { Store } from '../store/port/index.ts';
import { createDpopVerifier, type DpopVerifier } from './dpop.ts';

export interface SenderChecks {
  dpop: DpopVerifier;
  clientCertificate: ReadClientCertificate;
}

export function createSenderChecks(
  settings: { listen: Pick<Config['listen'], 'trustedProxies' | 'publicHost' | 'clientCertificateHeader' | 'tls'>; dpop: Config['oauth']['dpop']; issuer: string | undefined },
  services: { store: Store; secretKey: KeyObject },
): SenderChecks {
  return {
    dpop: createDpopVerifier(settings.dpop, { once: services.store.once, secretKey: services.secretKey, origin: createPublicOrigin(settings.listen), issuer: settings.issuer }),
    clientCertificate: createReadClientCertificate(settings.listen),
  };
}
