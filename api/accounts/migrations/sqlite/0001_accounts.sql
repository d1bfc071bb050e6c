-- Accounts, API tokens and login sessions (SQLite). Instants are Unix seconds (UTC).
-- Tokens and sessions are kept as SHA-256 digests only; passwords as argon2id PHC strings.

CREATE TABLE accounts (
    id                   INTEGER PRIMARY KEY,
    email                TEXT    NOT NULL UNIQUE,
    password_hash        TEXT    NOT NULL,
    plan                 TEXT    NOT NULL CHECK (plan IN ('none', 'trial', 'basic', 'premium', 'pro')),
    plan_expires_at      INTEGER,
    monthly_budget_units INTEGER CHECK (monthly_budget_units IS NULL OR monthly_budget_units >= 0),
    created_at           INTEGER NOT NULL
);

CREATE TABLE api_tokens (
    id           TEXT    PRIMARY KEY,
    account_id   INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    prefix       TEXT    NOT NULL,
    token_hash   BLOB    NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    revoked_at   INTEGER,
    rotated_at   INTEGER
);

CREATE INDEX api_tokens_by_account ON api_tokens (account_id);

CREATE TABLE sessions (
    session_hash BLOB    PRIMARY KEY CHECK (length(session_hash) = 32),
    account_id   INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);

CREATE INDEX sessions_by_expiry ON sessions (expires_at);
