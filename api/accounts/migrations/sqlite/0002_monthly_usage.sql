-- The monthly budget spent, per account, month (YYYY-MM, UTC) and endpoint: written behind by
-- the in-memory limiter and read back at start, so a restart keeps the month.
-- Keyed month first: the start-up read is one month's rows.

CREATE TABLE monthly_usage (
    month      TEXT    NOT NULL,
    account_id INTEGER NOT NULL,
    endpoint   TEXT    NOT NULL,
    calls      INTEGER NOT NULL CHECK (calls >= 0),
    units      INTEGER NOT NULL CHECK (units >= 0),
    PRIMARY KEY (month, account_id, endpoint)
);
