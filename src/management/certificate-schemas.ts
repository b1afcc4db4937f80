// The management API's schemas of an app's client certificate registration (RFC 8705 §2): as the
// store keeps it (CertificateAuth), and as a caller gives it (CertificateAuthInput); part of ./document.ts.

export const CERTIFICATE_SCHEMAS = {
  CertificateAuth: {
    description: 'RFC 8705 §2: how the app authenticates with a client certificate (then its secret no longer does); absent: it does not.',
    oneOf: [
      {
        type: 'object',
        additionalProperties: false,
        required: ['method', 'subject'],
        properties: {
          method: { const: 'tls_client_auth' },
          subject: {
            description: 'The subject DN (RFC 4514), or one subjectAltName entry, a certificate of listen.tls.clientCa must carry.',
            oneOf: [
              { type: 'object', additionalProperties: false, required: ['dn'], properties: { dn: { type: 'string' } } },
              { type: 'object', additionalProperties: false, required: ['san', 'value'], properties: { san: { enum: ['dns', 'uri', 'ip', 'email'] }, value: { type: 'string' } } },
            ],
          },
        },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['method', 'certificates'],
        properties: {
          method: { const: 'self_signed_tls_client_auth' },
          certificates: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['thumbprint', 'subject', 'expiresAt'],
              properties: {
                thumbprint: { type: 'string', description: 'base64url SHA-256 of the DER certificate (x5t#S256).' },
                subject: { type: 'string', description: 'Empty when registered by thumbprint alone.' },
                expiresAt: { type: ['integer', 'null'], description: 'Its notAfter, epoch milliseconds; null when registered by thumbprint alone.' },
              },
            },
          },
        },
      },
    ],
  },
  CertificateAuthInput: {
    description: 'Replaces how the app authenticates with a client certificate; method none: by its secret again.',
    oneOf: [
      { type: 'object', additionalProperties: false, required: ['method', 'subjectDn'], properties: { method: { const: 'tls_client_auth' }, subjectDn: { type: 'string', maxLength: 1024 } } },
      {
        type: 'object',
        additionalProperties: false,
        required: ['method', 'san', 'value'],
        properties: { method: { const: 'tls_client_auth' }, san: { enum: ['dns', 'uri', 'ip', 'email'] }, value: { type: 'string', maxLength: 1024 } },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['method', 'certificates'],
        properties: {
          method: { const: 'self_signed_tls_client_auth' },
          certificates: {
            type: 'array',
            minItems: 1,
            maxItems: 4,
            items: { type: 'string', maxLength: 16384 },
            description: 'Each a PEM certificate, or its SHA-256 thumbprint (base64url, or hex as openssl prints it).',
          },
        },
      },
      { type: 'object', additionalProperties: false, required: ['method'], properties: { method: { const: 'none' } } },
    ],
  },
};
