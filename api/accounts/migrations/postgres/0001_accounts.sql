-- Accounts, API tokens and login sessions (PostgreSQL). Instants are Unix seconds (UTC), as in
-- the SQLite schema, so both stores share one row mapping.
-- Tokens and sessions are kept as SHA-256 digests only; passwords as argon2id PHC strings.

CREATE TABLE accounts (
    id                   BIGSERIAL PRIMARY KEY,
    email                TEXT      NOT NULL UNIQUE,
    password_hash        TEXT      NOT NULL,
    plan                 TEXT      NOT NULL CHECK (plan IN ('none', 'trial', 'basic', 'premium', 'pro')),
    plan_expires_at      BIGINT,
    monthly_budget_units BIGINT    CHECK (monthly_budget_units IS NULL OR monthly_budget_units >= 0),
    created_at           BIGINT    NOT NULL
);

CREATE TABLE api_tokens (
    id           TEXT      PRIMARY KEY,
    account_id   BIGINT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         TEXT      NOT NULL,
    prefix       TEXT      NOT NULL,
    token_hash   BYTEA     NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    created_at   BIGINT    NOT NULL,
    expires_at   BIGINT,
    revoked_at   BIGINT,
    rotated_at   BIGINT
);

CREATE INDEX api_tokens_by_account ON api_tokens (account_id);

CREATE TABLE sessions (
    session_hash BYTEA     PRIMARY KEY CHECK (octet_length(session_hash) = 32),
    account_id   BIGINT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   BIGINT    NOT NULL,
    expires_at   BIGINT    NOT NULL
);

CREATE INDEX sessions_by_expiry ON sessions (expires_at);
