-- The hosted connector's OAuth 2.1 authorization server: clients registered dynamically
-- (RFC 7591) and their authorization codes. Codes are kept as SHA-256 digests, live ten
-- minutes and are deleted when redeemed (single use). A client nobody approved is dropped when
-- the table is full, so registration spam cannot crowd out real clients.

CREATE TABLE oauth_clients (
    client_id     TEXT    PRIMARY KEY,
    client_name   TEXT    NOT NULL,
    redirect_uris TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    last_used_at  BIGINT
);

CREATE INDEX oauth_clients_unused ON oauth_clients (last_used_at, created_at);

CREATE TABLE oauth_codes (
    code_hash      BYTEA   PRIMARY KEY CHECK (octet_length(code_hash) = 32),
    client_id      TEXT    NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    account_id     BIGINT  NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    redirect_uri   TEXT    NOT NULL,
    code_challenge TEXT    NOT NULL,
    resource       TEXT    NOT NULL,
    created_at     BIGINT  NOT NULL,
    expires_at     BIGINT  NOT NULL
);

CREATE INDEX oauth_codes_by_expiry ON oauth_codes (expires_at);
