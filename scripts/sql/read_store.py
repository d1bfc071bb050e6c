#!/usr/bin/env python3
"""Reading the snapshot store directly with DuckDB and with polars (docs/storage.md).

    .venv-sql/bin/python scripts/sql/read_store.py --data-dir ./data [--ticker SPY]
        [--optics target/service/optics]

The store is plain Hive-partitioned Parquet:
<data-dir>/snapshots/<dataset>/trade_date=YYYY-MM-DD/underlying=SYM/v-<20 digits>.parquet.
A partition may hold its two newest versions for a moment after a publication; its snapshot is
the highest version, and the zero-padded file names sort in version order, so "the current file
of each partition" is the greatest file name of its directory. The files carry `trade_date`
and `underlying` as columns of their own, so the paths are read only to pick versions. A
reference table (daily_bars, companies, ...) is the current file of its newest
`underlying=_all` partition.

Three reads, each written once in SQL (for DuckDB and `optics sql`) and once for polars:
1. the newest chain of the ticker: its nearest expiration with time left, strike by strike;
2. the dealer gamma profile (net GEX, dollars per 1 % move) by session and strike, from the
   `exposures` dataset (every session whose exposures are stored);
3. the ticker's IV rank history (`vol_daily`: iv30d and its one-year rank).

The two engines must agree to 1e-9 relative. With --optics, each read is also asked of
`optics sql` (DataFusion over the same files) and must agree too. Prints a line per read.
Exits non-zero on any disagreement: `make test-sql-readers` runs it over a backfilled store.
"""

import argparse
import csv
import io
import math
import os
import subprocess
import sys

import duckdb
import polars as pl


def files(store: str, dataset: str) -> str:
    return os.path.join(store, dataset, "*", "*", "*.parquet")


# --- SQL: the same three queries for DuckDB and for `optics sql` -----------------------------

def queries(source, ticker: str):
    """The three reads, with `source(dataset)` as each dataset's FROM clause."""
    t = ticker.replace("'", "''")
    return [
        f"""WITH c AS (SELECT * FROM {source("chain")} WHERE underlying = '{t}'),
                 d AS (SELECT max(trade_date) AS day FROM c),
                 e AS (SELECT min(expiration) AS exp FROM c, d WHERE trade_date = day AND dte > 0)
            SELECT strike, call_mid, call_iv, put_mid, put_iv
            FROM c, d, e WHERE trade_date = day AND expiration = exp AND settlement = 'PM'
            ORDER BY strike""",
        f"""SELECT trade_date, strike, sum(net_gamma_usd_per_pct) AS gex
            FROM {source("exposures")} WHERE underlying = '{t}'
            GROUP BY trade_date, strike ORDER BY trade_date, strike""",
        f"""SELECT trade_date, iv30d_pct, iv_rank FROM {source("vol_daily")}
            WHERE underlying = '{t}' ORDER BY trade_date""",
    ]


def duck_current(dataset: str, store: str) -> str:
    """A FROM clause: the rows of the current file of each partition of `dataset`."""
    return f"""(
        SELECT * EXCLUDE (filename) FROM read_parquet('{files(store, dataset)}', filename = true,
                                                      hive_partitioning = false)
        QUALIFY filename = max(filename) OVER (PARTITION BY regexp_replace(filename, '/[^/]*$', ''))
    )"""


def duck_reads(store: str, ticker: str):
    con = duckdb.connect()
    return [con.execute(q).fetchall() for q in queries(lambda d: duck_current(d, store), ticker)]


# --- polars -------------------------------------------------------------------------------

def pl_current(dataset: str, store: str) -> pl.LazyFrame:
    """The rows of the current file of each partition of `dataset`."""
    frame = pl.scan_parquet(files(store, dataset), include_file_paths="file",
                            hive_partitioning=False)
    partition = pl.col("file").str.replace(r"/[^/]*$", "")
    return frame.filter(pl.col("file") == pl.col("file").max().over(partition)).drop("file")


def pl_reads(store: str, ticker: str):
    c = pl_current("chain", store).filter(pl.col("underlying") == ticker).collect()
    day = c["trade_date"].max()
    today = c.filter(pl.col("trade_date") == day)
    expiration = today.filter(pl.col("dte") > 0)["expiration"].min()
    newest_chain = (today.filter((pl.col("expiration") == expiration)
                                 & (pl.col("settlement") == "PM"))
                    .sort("strike")
                    .select("strike", "call_mid", "call_iv", "put_mid", "put_iv"))
    gex = (pl_current("exposures", store).filter(pl.col("underlying") == ticker)
           .group_by("trade_date", "strike").agg(pl.col("net_gamma_usd_per_pct").sum().alias("gex"))
           .sort("trade_date", "strike").collect())
    rank = (pl_current("vol_daily", store).filter(pl.col("underlying") == ticker)
            .sort("trade_date").select("trade_date", "iv30d_pct", "iv_rank")
            .collect())
    return newest_chain.rows(), gex.rows(), rank.rows()


# --- optics sql ---------------------------------------------------------------------------

def optics_reads(optics: str, data_dir: str, ticker: str):
    def run(query: str):
        out = subprocess.run([optics, "sql", "--data-dir", data_dir, "--format", "csv", query],
                             check=True, capture_output=True, text=True).stdout
        rows = list(csv.reader(io.StringIO(out)))[1:]
        return [tuple(parse(v) for v in row) for row in rows]

    return [run(q) for q in queries(lambda dataset: dataset, ticker)]


def parse(value: str):
    if value == "":
        return None
    try:
        return float(value)
    except ValueError:
        return value


# --- comparison ---------------------------------------------------------------------------

def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return str(a) == str(b)  # dates: a date object, Arrow's text and CSV's all print ISO


def compare(name: str, left, right, what: str) -> bool:
    if len(left) != len(right):
        print(f"{name}: {what} has {len(right)} rows, DuckDB {len(left)}", file=sys.stderr)
        return False
    for i, (l, r) in enumerate(zip(left, right)):
        if len(l) != len(r) or not all(same(x, y) for x, y in zip(l, r)):
            print(f"{name}: row {i} differs: DuckDB {l}, {what} {r}", file=sys.stderr)
            return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default="./data")
    parser.add_argument("--ticker", default="SPY")
    parser.add_argument("--optics", help="an optics binary: its `sql` must agree too")
    args = parser.parse_args()
    store = os.path.join(args.data_dir, "snapshots")
    duck = duck_reads(store, args.ticker)
    polars = pl_reads(store, args.ticker)
    others = [("polars", polars)]
    if args.optics:
        others.append(("optics sql", optics_reads(args.optics, args.data_dir, args.ticker)))
    ok = True
    for i, name in enumerate(["newest chain, nearest expiration", "net GEX by session and strike",
                              "iv30d and IV rank by session"]):
        if not duck[i]:
            print(f"{name}: no rows for {args.ticker}", file=sys.stderr)
            ok = False
            continue
        agree = [what for what, rows in others if compare(name, duck[i], rows[i], what)]
        ok &= len(agree) == len(others)
        print(f"{name}: {len(duck[i])} rows; DuckDB agrees with {', '.join(agree) or 'nothing'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
