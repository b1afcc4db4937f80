// The strongest Node peer: oidc-provider's client_credentials token endpoint, in-memory adapter
// (so, unlike the gateway, it stores nothing durable).
import Provider from 'oidc-provider';

const [port = '0', secret = ''] = process.argv.slice(2);
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{ client_id: 'bench', client_secret: secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] }],
  features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
});
provider.listen(Number(port), () => process.send?.('ready'));
