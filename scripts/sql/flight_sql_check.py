#!/usr/bin/env python3
"""The Flight SQL door from Python: ADBC's Flight SQL driver reads a chain-at-time into pandas.

    .venv-sql/bin/python scripts/sql/flight_sql_check.py --optics target/debug/optics \
        --data-dir <a backfilled store> [--ticker SPX]

Starts `optics serve --flight-sql 127.0.0.1:0` on the store (with the local account it makes),
then, as a quant would from a notebook:
1. connects with the API token as a bearer header and reads the chain of the ticker's oldest
   stored session at its nearest expiration (the rows `/chain-at-time` answers) into a pandas
   DataFrame, and checks it against `/chain-at-time` over HTTP with the same token: every call
   and put, strike, bid, ask, IV and delta, to 1e-12;
2. connects with user and password (any user, the token as password: the Flight handshake)
   and counts the `vol_daily` rows of the ticker;
3. is refused without a token, and refused a write (`DROP TABLE`) with a token.
Prints a line per check; exits non-zero on any failure (`make test-sql-readers` runs it).
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
import urllib.request

import adbc_driver_flightsql.dbapi as flight_sql
import adbc_driver_manager
from adbc_driver_flightsql import DatabaseOptions


def start_server(optics: str, data_dir: str):
    """`optics serve` on free ports; returns the process and its HTTP and gRPC addresses."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPTICS_")}
    process = subprocess.Popen(
        [optics, "serve", "--data-dir", data_dir, "--listen", "127.0.0.1:0",
         "--flight-sql", "127.0.0.1:0", "--bootstrap-local-account"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    http = grpc = None
    deadline = time.monotonic() + 120
    seen = []
    while (http is None or grpc is None) and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if m := re.search(r"listening on (http://\S+)", line):
            http = m.group(1)
        if m := re.search(r"flight sql on (grpc://\S+)", line):
            grpc = m.group(1)
    if http is None or grpc is None:
        process.kill()
        sys.exit("optics serve did not announce both addresses:\n" + "".join(seen))
    return process, http, grpc


def connect(grpc: str, **options):
    return flight_sql.connect(grpc, db_kwargs=options, autocommit=True)


def rest(http: str, path: str, token: str):
    request = urllib.request.Request(http + path, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.load(answer)


def missing(value) -> bool:
    """A null: None from JSON, NaN from pandas."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def close(a, b) -> bool:
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)


def with_token(grpc: str, token: str):
    return connect(grpc, **{DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {token}"})


def check_chain_at_time(grpc: str, http: str, token: str, ticker: str) -> bool:
    with with_token(grpc, token) as conn:
        with conn.cursor() as cur:
            cur.execute(f"SELECT min(trade_date) FROM chain WHERE underlying = '{ticker}'")
            (day,) = cur.fetchone()
            cur.execute(f"SELECT min(expiration) FROM chain WHERE underlying = '{ticker}' "
                        f"AND trade_date = DATE '{day}' AND dte > 0")
            (expiration,) = cur.fetchone()
            cur.execute(f"""
                SELECT strike, settlement,
                       call_option_symbol, call_bid, call_ask, call_iv, call_delta,
                       put_option_symbol, put_bid, put_ask, put_iv, put_delta
                FROM chain
                WHERE underlying = '{ticker}' AND trade_date = DATE '{day}'
                  AND expiration = DATE '{expiration}'
                ORDER BY strike, settlement""")
            frame = cur.fetch_df()
    print(f"chain at time over Flight SQL: {ticker} {day} expiring {expiration}: "
          f"{len(frame)} rows into a pandas {type(frame).__name__}")
    answer = rest(http, f"/api/mcp/data/chain-at-time/{ticker}?expiration={expiration}"
                        f"&trade_date={day}", token)
    if not answer.get("success"):
        print(f"/chain-at-time refused: {answer}", file=sys.stderr)
        return False
    data = answer["data"]
    ok = True
    for side in ("call", "put"):
        listed = frame[frame[f"{side}_option_symbol"].notna()]
        served = data[f"{side}s"]
        if len(listed) != len(served) or not len(served):
            print(f"{side}s: {len(listed)} over Flight SQL, {len(served)} from /chain-at-time",
                  file=sys.stderr)
            ok = False
            continue
        for (_, row), rest_row in zip(listed.iterrows(), served):
            pairs = [(row["strike"], rest_row["strike"]),
                     (row[f"{side}_bid"], rest_row.get("bid")),
                     (row[f"{side}_ask"], rest_row.get("ask")),
                     (row[f"{side}_iv"], rest_row.get("implied_vol")),
                     (row[f"{side}_delta"], rest_row.get("delta"))]
            if not all(close(a, b) for a, b in pairs):
                print(f"{side} at {row['strike']}: Flight SQL {pairs}", file=sys.stderr)
                ok = False
                break
        print(f"{side}s: {len(served)} rows; Flight SQL and /chain-at-time "
              f"{'agree' if ok else 'DISAGREE'}")
    return ok


def check_handshake(grpc: str, token: str, ticker: str) -> bool:
    with connect(grpc, username="quant", password=token) as conn:
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*) AS sessions FROM vol_daily WHERE underlying = '{ticker}'")
            (sessions,) = cur.fetchone()
    print(f"handshake with the token as password: {sessions} vol_daily sessions of {ticker}")
    return sessions > 0


def refused(open_connection, query: str, because: tuple) -> bool:
    """Whether `query` on a connection `open_connection()` makes fails (at connecting or at
    the query) with an error naming one of `because`."""
    try:
        with open_connection() as conn, conn.cursor() as cur:
            cur.execute(query)
            cur.fetchall()
    except adbc_driver_manager.Error as error:
        if any(word in str(error) for word in because):
            return True
        print(f"{query}: unexpected error {error}", file=sys.stderr)
        return False
    print(f"{query}: answered, not refused", file=sys.stderr)
    return False


def check_refusals(grpc: str, token: str) -> bool:
    ok = refused(lambda: connect(grpc), "SELECT 1", ("Unauthenticated", "API token"))
    ok &= refused(lambda: with_token(grpc, token), "DROP TABLE chain",
                  ("not supported", "not allowed"))
    with with_token(grpc, token) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM chain")
        (rows,) = cur.fetchone()
    print(f"refused without a token and refused DROP TABLE; chain still has {rows} rows")
    return ok and rows > 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--optics", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--ticker", default="SPX")
    args = parser.parse_args()
    process, http, grpc = start_server(args.optics, args.data_dir)
    try:
        with open(os.path.join(args.data_dir, "api-token")) as f:
            token = f.read().strip()
        ok = check_chain_at_time(grpc, http, token, args.ticker)
        ok &= check_handshake(grpc, token, args.ticker)
        ok &= check_refusals(grpc, token)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
