// The contract every store driver must pass, one part per port (AccountStore, AppStore,
// TokenStore, ThrottleStore, OnceStore, ConsentStore, Counters, UsageStore, TransferStore and SigningKeyStore) and one for what
// the management API needs of them, each checked through the gateway-facing Store: the driver
// behind withTokenCache. A driver's test file calls `storeContract` with a function that opens a
// fresh, empty store (and, when the driver is durable, a way to reopen it); every test opens its
// own. No file here ends in `.test.ts`: `node --test "test/**/*.test.ts"` must not run the parts on their own.
import { describe } from 'node:test';
import { accountsContract } from './accounts.ts';
import { appsContract } from './apps.ts';
import { consentsContract } from './consents.ts';
import { countersContract } from './counters.ts';
import type { OpenStore } from './fixture.ts';
import { managementContract } from './management.ts';
import { migrationContract } from './migration.ts';
import { onceContract } from './once.ts';
import { signingKeysContract } from './signing-keys.ts';
import { throttlesContract } from './throttles.ts';
import { tokensContract } from './tokens.ts';

export type { OpenedStore, OpenStore } from './fixture.ts';

export function storeContract(name: string, open: OpenStore): void {
  describe(name, () => {
    accountsContract(open);
    appsContract(open);
    tokensContract(open);
    throttlesContract(open);
    onceContract(open);
    consentsContract(open);
    countersContract(open);
    migrationContract(open);
    managementContract(open);
    signingKeysContract(open);
  });
}
