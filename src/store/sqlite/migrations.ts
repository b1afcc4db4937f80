// The SQLite schema, as the migrations that build it: append only, a migration, once released,
// never changes. PRAGMA user_version holds the count applied.
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE developers (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
     created_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE apps (
     id TEXT PRIMARY KEY,
     developer_id TEXT NOT NULL REFERENCES developers(id),
     name TEXT NOT NULL,
     product TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
     created_at INTEGER NOT NULL,
     UNIQUE (developer_id, name)
   ) STRICT;
   CREATE TABLE credentials (
     key TEXT PRIMARY KEY,
     app_id TEXT NOT NULL REFERENCES apps(id),
     secret_hash BLOB NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('approved', 'revoked')),
     expires_at INTEGER,
     created_at INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX credentials_app ON credentials(app_id);
   CREATE TABLE tokens (
     hash BLOB PRIMARY KEY,
     kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
     app_id TEXT NOT NULL,
     key TEXT NOT NULL,
     product TEXT NOT NULL,
     scope TEXT NOT NULL,
     subject TEXT,
     family TEXT NOT NULL,
     issued_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     used_at INTEGER,
     revoked_at INTEGER
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX tokens_family ON tokens(family);
   CREATE INDEX tokens_app ON tokens(app_id);
   CREATE INDEX tokens_expires ON tokens(expires_at);
   CREATE TABLE revocations (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL CHECK (kind IN ('family', 'app', 'developer', 'key')),
     ref TEXT NOT NULL,
     at INTEGER NOT NULL
   ) STRICT;`,
  `CREATE TABLE quota_counters (
     key TEXT PRIMARY KEY,
     window_start INTEGER NOT NULL,
     window_end INTEGER NOT NULL,
     count INTEGER NOT NULL,
     previous_count INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;`,
  // The developer portal: passwords (scrypt, as "scrypt$N$r$p$salt$hash"), invitations and
  // sessions (by the SHA-256 of their code and id), failed logins per account, and calls per app and hour.
  `ALTER TABLE developers ADD COLUMN password_hash TEXT;
   ALTER TABLE developers ADD COLUMN invite_hash BLOB;
   ALTER TABLE developers ADD COLUMN invite_expires_at INTEGER;
   CREATE TABLE portal_sessions (
     id_hash BLOB PRIMARY KEY,
     developer_id TEXT NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX portal_sessions_developer ON portal_sessions(developer_id);
   CREATE TABLE login_failures (
     account TEXT PRIMARY KEY,
     count INTEGER NOT NULL,
     first_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE TABLE app_usage (
     app_id TEXT NOT NULL,
     hour INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (app_id, hour)
   ) STRICT, WITHOUT ROWID;`,
  // Operator approval of apps registered in the portal; login attempts slowed by backoff from the last one.
  `ALTER TABLE apps ADD COLUMN approval TEXT NOT NULL DEFAULT 'approved' CHECK (approval IN ('approved', 'pending'));
   ALTER TABLE login_failures ADD COLUMN last_at INTEGER;`,
  // Proven email addresses, and the mailed links that prove them or reset a password (by the
  // SHA-256 of their token). Developers from before count as verified: operators' and invited
  // ones cannot be told apart from open sign-ups, and treating them as unverified would let an
  // invitation delete their apps.
  `ALTER TABLE developers ADD COLUMN verified_at INTEGER;
   UPDATE developers SET verified_at = created_at;
   CREATE TABLE email_tokens (
     hash BLOB PRIMARY KEY,
     developer_id TEXT NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
     purpose TEXT NOT NULL CHECK (purpose IN ('verify', 'reset')),
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX email_tokens_developer ON email_tokens(developer_id, purpose);`,
  // The single-use ids spent (by their SHA-256), kept until they expire: a one-time page (a new
  // secret's) opens once, whichever process serves it.
  `CREATE TABLE spent_once (
     id_hash BLOB PRIMARY KEY,
     expires_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;`,
  // The scopes an app may have when fewer than its product's (a management client's),
  // space-delimited as a token's scope is (RFC 6749 §3.3: a scope holds no space); NULL: its
  // product's. Tokens by subject, for "log this user out everywhere".
  `ALTER TABLE apps ADD COLUMN scopes TEXT;
   CREATE INDEX tokens_subject ON tokens(subject) WHERE subject IS NOT NULL;`,
  // Usage per app, route and status class (the management API's reports), with the product of
  // the calls' tokens. app_usage is no longer written: its rows, whose routes and status classes
  // were never counted, still add to an app's hourly totals (the portal's chart) until the purge
  // removes them (a week on, when this was written; USAGE_KEPT_MS now); a report, which is by route, leaves them out. And the Idempotency-Keys
  // of the management API: claimed, then done with the answer to replay, until they expire.
  `CREATE TABLE usage_counts (
     hour INTEGER NOT NULL,
     app_id TEXT NOT NULL,
     route TEXT NOT NULL,
     status_class TEXT NOT NULL CHECK (status_class IN ('1xx', '2xx', '3xx', '4xx', '5xx')),
     product TEXT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (hour, app_id, route, status_class)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX usage_counts_app ON usage_counts(app_id, hour);
   CREATE TABLE idempotency_keys (
     key_hash BLOB PRIMARY KEY,
     fingerprint BLOB NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('claimed', 'done')),
     locked_until INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     status INTEGER,
     body BLOB
   ) STRICT, WITHOUT ROWID;`,
  // Signing keys (JWT access tokens, upstream identities), the private half encrypted by the
  // gateway before it gets here; and the change feed learns their kind, which a CHECK cannot be
  // widened to in place: the table is made again, its rows and sequence kept.
  `CREATE TABLE signing_keys (
     kid TEXT PRIMARY KEY,
     algorithm TEXT NOT NULL CHECK (algorithm IN ('ES256', 'EdDSA', 'RS256')),
     public_jwk TEXT NOT NULL,
     private_key BLOB NOT NULL,
     created_at INTEGER NOT NULL,
     activates_at INTEGER NOT NULL,
     revoked_at INTEGER
   ) STRICT, WITHOUT ROWID;
   CREATE TABLE revocations_new (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL CHECK (kind IN ('family', 'app', 'developer', 'key', 'signing-key')),
     ref TEXT NOT NULL,
     at INTEGER NOT NULL
   ) STRICT;
   INSERT INTO revocations_new (seq, kind, ref, at) SELECT seq, kind, ref, at FROM revocations;
   DELETE FROM sqlite_sequence WHERE name = 'revocations_new';
   INSERT INTO sqlite_sequence (name, seq) SELECT 'revocations_new', seq FROM sqlite_sequence WHERE name = 'revocations';
   DROP TABLE revocations;
   ALTER TABLE revocations_new RENAME TO revocations;`,
  // The authorization code grant: whether an app holds a secret (confidential) or not (public:
  // single-page, mobile and command-line apps), and the redirect URIs it registered, as a JSON
  // array of strings. And the consents users gave: per subject and app, the scopes (space-delimited)
  // and until when.
  `ALTER TABLE apps ADD COLUMN client_type TEXT NOT NULL DEFAULT 'confidential' CHECK (client_type IN ('confidential', 'public'));
   ALTER TABLE apps ADD COLUMN redirect_uris TEXT NOT NULL DEFAULT '[]';
   CREATE TABLE consents (
     app_id TEXT NOT NULL,
     subject TEXT NOT NULL,
     scope TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     PRIMARY KEY (app_id, subject)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX consents_expires ON consents(expires_at);`,
  // Sender-constrained tokens (RFC 9449, RFC 8705): what a token is bound to, as its RFC 7800
  // cnf member in JSON ({"jkt": …} or {"x5t#S256": …}); NULL for a bearer token.
  `ALTER TABLE tokens ADD COLUMN cnf TEXT;`,
  // How an app authenticates with a client certificate (RFC 8705 §2), as App.certificateAuth in
  // JSON; NULL for an app that does not.
  `ALTER TABLE apps ADD COLUMN certificate_auth TEXT;`,
  // How long the calls of usage_counts took: a count per bucket of LATENCY_BOUNDS_MS (a number
  // from 0), only the buckets with calls in them. The portal's and `gateway admin usage`'s
  // percentiles are read from them.
  `CREATE TABLE usage_latency (
     hour INTEGER NOT NULL,
     app_id TEXT NOT NULL,
     route TEXT NOT NULL,
     status_class TEXT NOT NULL,
     bucket INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (hour, app_id, route, status_class, bucket)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX usage_latency_app ON usage_latency(app_id, hour);`,
];
