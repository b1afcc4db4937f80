# An upstream service's verification of the gateway's tokens with PyJWT, as docs/signed-tokens.md
# shows it: the key fetched from the JWKS over HTTP by PyJWKClient (by the token's kid), and only
# the algorithm the gateway signs with (oauth.signing.algorithm) accepted.
# Usage: verify.py JWKS_URL TOKEN AUDIENCE ISSUER ALGORITHM; prints the claims as JSON, or
# "refused: <reason>" and exits 1.
import json
import sys

import jwt

jwks_url, token, audience, issuer, algorithm = sys.argv[1:6]
try:
    signing_key = jwt.PyJWKClient(jwks_url).get_signing_key_from_jwt(token)
    claims = jwt.decode(token, signing_key.key, algorithms=[algorithm], audience=audience, issuer=issuer)
except Exception as err:  # noqa: BLE001 - the reason is what the test reads
    print(f"refused: {type(err).__name__}: {err}")
    sys.exit(1)
print(json.dumps(claims, sort_keys=True))
