"""`make test-distributed`: the distributed deployment on real servers, on one machine.

Starts, on loopback: a Kafka-protocol broker (tansu, SQLite storage so a restart keeps its log),
an S3 API server (moto) behind a TCP relay this script can cut, and uses the machine's
PostgreSQL and Redis. Then runs, as separate `optics` processes: a backfill that seeds the
store, one ingest, two compute workers in one consumer group and two API replicas, all on one
market clock (a replayed session). It checks:

1. every underlying's snapshots arrive in S3, and both replicas serve the same chain and GEX
   for it, within two cycles of each other;
2. a token created on replica A works on B; revoked on B, it is refused on A at once; 61
   requests spread over both replicas in one minute get exactly one 429; the month's units
   are one count across both;
3. kill -9 of one worker: the other takes its underlyings within the session timeout (their
   snapshots keep advancing); restarted, the group gives it partitions back;
4. the broker down for 10 s: ingest and the workers reconnect, every quote the broker
   acknowledged reaches the workers, the replicas serve the last snapshots meanwhile;
5. S3 unreachable: history reads answer 424, live reads go on, /health says so, and all of
   it recovers by itself.

Then prints the figures (quotes/s through the broker, snapshot files/s and MB/s into S3, chain
read p50/p99 on a replica over S3 and over a local directory) and exits 0 only if every check
held. Each process's log is kept in the work directory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from xml.etree import ElementTree

# The replayed session: a Friday, from 15:00 UTC (10:00 in New York), at market speed.
SESSION_START = "2026-11-20T15:00:00Z"
UNIVERSE = 12
CYCLE_MS = 1000
# The replicas follow the snapshot events on the broker; their store poll only catches what the
# events missed, and tells /health when S3 is gone (check 5 waits for that).
POLL_MS = 5000
BUCKET = "optics"
TOPICS = {
    "optics.option_quotes": 4,
    "optics.underlying_ticks": 4,
    "optics.daily_bars": 4,
    "optics.reference": 1,
    "optics.snapshots": 1,
}
# How long a dead worker's partitions wait for the group to notice (the bus URL's
# session_timeout_ms; librdkafka's default is 45 s).
SESSION_TIMEOUT_S = 10
FAILURES: list[str] = []


def check(ok: bool, what: str) -> None:
    print(("  ok    " if ok else "  FAIL  ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what: str, predicate, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as error:  # a server still starting
            last = error
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s (last: {last!r})")


def http(method: str, url: str, token: str | None = None, body=None, headers=None,
         timeout: float = 30) -> tuple[int, dict, bytes]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if body is not None and not isinstance(body, bytes):
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def get_json(url: str, token: str | None = None) -> tuple[int, dict]:
    status, _, body = http("GET", url, token)
    try:
        return status, json.loads(body)
    except ValueError:
        return status, {}


class Process:
    """A started server process, its output in `<work>/<name>.log`."""

    def __init__(self, name: str, argv: list[str], work: Path, env: dict, cwd: Path | None = None):
        self.name, self.argv, self.work, self.env, self.cwd = name, argv, work, env, cwd
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        log = open(self.work / f"{self.name}.log", "a")
        self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                     env=self.env, cwd=self.cwd)

    def kill9(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()

    def alive(self) -> bool:
        return bool(self.proc) and self.proc.poll() is None

    def log(self) -> str:
        return (self.work / f"{self.name}.log").read_text(errors="replace")


class Relay:
    """A TCP relay from `port` to `target`: `cut()` closes the listener and every connection
    (clients get connection refused), `restore()` listens again on the same port."""

    def __init__(self, port: int, target: int):
        self.port, self.target = port, target
        self.listener: socket.socket | None = None
        self.connections: list[socket.socket] = []
        self.lock = threading.Lock()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self.lock:
            if self.listener:
                self.listener.close()
                self.listener = None
            for connection in self.connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                connection.close()
            self.connections.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.connections += [client, upstream]
            pair = [client, upstream, 2]  # two pipes; the last one to end closes both sockets
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b, pair), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, pair: list) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with self.lock:
            pair[2] -= 1
            if pair[2] == 0:
                for s in pair[:2]:
                    s.close()
                    if s in self.connections:
                        self.connections.remove(s)


def s3_keys(endpoint: str, prefix: str) -> list[tuple[str, int]]:
    """Every (key, size) under `prefix` in the bucket (ListObjectsV2, unsigned: moto accepts)."""
    keys, token = [], None
    ns = "{http://s3.amazonaws.com/doc/2006-03-01/}"
    while True:
        url = f"{endpoint}/{BUCKET}?list-type=2&prefix={prefix}"
        if token:
            url += "&continuation-token=" + urllib.request.quote(token)
        for attempt in range(5):
            status, _, body = http("GET", url)
            # moto answers 500 now and then while objects are deleted under a listing.
            if status < 500:
                break
            time.sleep(0.2 * (attempt + 1))
        if status != 200:
            raise RuntimeError(f"listing {prefix}: {status} {body[:200]!r}")
        root = ElementTree.fromstring(body)
        for item in root.iter(f"{ns}Contents"):
            keys.append((item.find(f"{ns}Key").text, int(item.find(f"{ns}Size").text)))
        token_node = root.find(f"{ns}NextContinuationToken")
        if token_node is None:
            return keys
        token = token_node.text


def metric(url: str, series: str) -> float:
    """The value of `series` (name and labels, as printed) on a Prometheus page; 0 when absent."""
    _, _, body = http("GET", url)
    for line in body.decode().splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--optics", required=True)
    parser.add_argument("--tansu", required=True)
    parser.add_argument("--moto", required=True)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    # The relay holds two sockets per S3 connection the services open.
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    optics = str(Path(args.optics).resolve())
    work = Path(tempfile.mkdtemp(prefix="optics-distributed-"))
    print(f"work directory: {work}", flush=True)
    processes: list[Process] = []
    database = f"optics_distributed_{os.getpid()}"
    started = time.monotonic()
    try:
        return run(args, optics, work, processes, database)
    except BaseException:
        FAILURES.append("the run stopped on an exception")  # keeps the logs for a look
        print(f"logs in {work}", flush=True)
        raise
    finally:
        for process in reversed(processes):
            process.stop()
        subprocess.run(["psql", args.postgres + "/postgres", "-q", "-c",
                        f'DROP DATABASE IF EXISTS "{database}"'], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"took {time.monotonic() - started:.0f} s", flush=True)
        if not args.keep and not FAILURES:
            shutil.rmtree(work, ignore_errors=True)


def run(args, optics: str, work: Path, processes: list[Process], database: str) -> int:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPTICS_", "AWS_", "RUST_LOG"))}

    # The S3 API, behind a relay the S3 checks cut.
    moto_port, s3_port = free_port(), free_port()
    processes.append(Process("moto", [args.moto, "-H", "127.0.0.1", "-p", str(moto_port)], work, base_env))
    moto = f"http://127.0.0.1:{moto_port}"
    wait_until("moto", lambda: http("GET", moto)[0] == 200, 60)
    assert http("PUT", f"{moto}/{BUCKET}")[0] == 200, "creating the bucket"
    relay = Relay(s3_port, moto_port)
    s3 = f"http://127.0.0.1:{s3_port}"

    # The broker, its log in SQLite in its own directory, and the topics.
    broker_port = free_port()
    broker_dir = work / "broker"
    broker_dir.mkdir()
    broker_url = f"tcp://127.0.0.1:{broker_port}"
    broker = Process("broker", [str(Path(args.tansu).resolve()), "broker", "--listener-url", broker_url,
                                "--advertised-listener-url", broker_url,
                                "--storage-engine", "sqlite://tansu.db"], work, base_env, cwd=broker_dir)
    processes.append(broker)
    wait_until("broker", lambda: socket.create_connection(("127.0.0.1", broker_port), 1).close() or True, 60)
    for topic, partitions in TOPICS.items():
        subprocess.run([args.tansu, "topic", "create", topic, "--partitions", str(partitions),
                        "--broker", broker_url], check=True, stdout=subprocess.DEVNULL)

    # The account database and a Redis prefix of this run's own.
    subprocess.run(["psql", args.postgres + "/postgres", "-q", "-c", f'CREATE DATABASE "{database}"'],
                   check=True)
    db = f"{args.postgres}/{database}"
    anchor = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    env = dict(base_env,
               AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1",
               AWS_ENDPOINT=s3, AWS_ALLOW_HTTP="true",
               OPTICS_STORE=f"s3://{BUCKET}/snapshots", OPTICS_ARCHIVE=f"s3://{BUCKET}/archive",
               OPTICS_DATA_DIR=str(work / "data"), OPTICS_UNIVERSE=str(UNIVERSE),
               OPTICS_START=SESSION_START, OPTICS_CLOCK_ANCHOR=anchor,
               OPTICS_BUS=f"kafka://127.0.0.1:{broker_port}?session_timeout_ms={SESSION_TIMEOUT_S * 1000}",
               OPTICS_LOG="info")

    # Seed the store: the company map and history the replicas serve beside the live session.
    print("seeding the store (backfill)…", flush=True)
    subprocess.run([optics, "backfill", "--to", "2026-11-19", "--sessions", "2", "--history-years", "1",
                    "--quiet"], env=env, check=True, stdout=subprocess.DEVNULL)

    health = {name: free_port() for name in ("ingest", "compute-a", "compute-b")}
    ingest = Process("ingest", [optics, "ingest", "--archive-every-secs", "1",
                                "--health-listen", f"127.0.0.1:{health['ingest']}"], work, env)
    workers = {
        name: Process(name, [optics, "compute", "--worker-id", name, "--cycle-ms", str(CYCLE_MS),
                             "--health-listen", f"127.0.0.1:{health[name]}", *extra], work, env)
        for name, extra in (("compute-a", ["--session-close"]), ("compute-b", []))
    }
    ingest_started = time.monotonic()
    processes += [ingest, *workers.values()]
    api_env = dict(env, OPTICS_DB=db, OPTICS_LIMITER=args.redis,
                   OPTICS_LIMITER_PREFIX=f"optics-dist-{os.getpid()}", OPTICS_POLL_MS=str(POLL_MS))
    replicas = {}
    for name in ("api-a", "api-b"):
        port = free_port()
        processes.append(Process(name, [optics, "serve", "--listen", f"127.0.0.1:{port}"], work, api_env))
        replicas[name] = f"http://127.0.0.1:{port}"
    replicas_started = time.monotonic()
    for name, url in replicas.items():
        wait_until(name, lambda url=url: http("GET", f"{url}/health")[0] == 200, 900)
    print(f"replicas listening after {time.monotonic() - replicas_started:.0f} s", flush=True)

    # An account, its password given on stdin.
    password = "distributed-check-password-1"
    subprocess.run([optics, "accounts", "create", "--email", "dist@example.com", "--plan", "pro",
                    "--password-stdin", "--db", db], input=password + "\n", text=True, check=True,
                   env=env, stdout=subprocess.DEVNULL)
    issued = subprocess.run([optics, "tokens", "create", "--email", "dist@example.com", "--db", db],
                            text=True, check=True, env=env, capture_output=True).stdout
    token = re.search(r"token \(shown once\): (\S+)", issued).group(1)

    underlyings = check_snapshots_and_replicas(s3, replicas, token)
    publication = publication_rate(moto)
    check_shared_accounts(replicas, password, optics, env, db)
    check_worker_failover(s3, workers, health)
    check_broker_outage(broker, ingest, workers, replicas, token, underlyings,
                        f"127.0.0.1:{broker_port}", s3)
    run_seconds = time.monotonic() - ingest_started
    check_store_outage(relay, replicas, token, underlyings)
    # Figures on replicas of their own, with limits that let a measurement through.
    generous = ["--rate-per-minute", "1000000", "--rate-per-hour", "100000000",
                "--plan-budgets", "pro=100000000"]
    port = free_port()
    figures_replica = Process("api-figures", [optics, "serve", "--listen", f"127.0.0.1:{port}", *generous],
                              work, api_env)
    processes.append(figures_replica)
    wait_until("figures replica", lambda: http("GET", f"http://127.0.0.1:{port}/health")[0] == 200, 900)
    figures(moto, ingest, run_seconds, f"http://127.0.0.1:{port}", work, optics,
            dict(api_env), token, underlyings, publication, generous)
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed; logs in {work}", flush=True)
        return 1
    print("\nevery check held", flush=True)
    return 0


def newest_chain_versions(s3: str) -> dict[str, tuple[str, int]]:
    """The newest chain file (key, size) of each underlying of the live session in S3."""
    newest: dict[str, tuple[str, int]] = {}
    for key, size in s3_keys(s3, "snapshots/chain/trade_date=2026-11-20/"):
        match = re.search(r"underlying=([^/]+)/v-(\d+)\.parquet$", key)
        if match and (match.group(1) not in newest or key > newest[match.group(1)][0]):
            newest[match.group(1)] = (key, size)
    return newest


def check_snapshots_and_replicas(s3: str, replicas: dict, token: str) -> list[str]:
    print("\n1. snapshots in S3, the same answers from both replicas", flush=True)
    universe = wait_until("every underlying's chain in S3",
                          lambda: (found := newest_chain_versions(s3)) and len(found) >= UNIVERSE and found,
                          240, every=1)
    underlyings = sorted(urllib.request.unquote(u) for u in universe)
    check(len(underlyings) == UNIVERSE, f"{len(underlyings)} underlyings have live chain snapshots in S3")
    for dataset in ("exposures", "flow"):
        keys = s3_keys(s3, f"snapshots/{dataset}/trade_date=2026-11-20/")
        check(len({re.search(r"underlying=([^/]+)/", k).group(1) for k, _ in keys}) == UNIVERSE,
              f"every underlying has {dataset} snapshots in S3")
    # Per ticker, both replicas' chain and GEX: of snapshots at most two cycles apart, and with
    # the same data when of the same instant. A snapshot can be republished at the same instant
    # (a new spot tick, no new quotes), so a mismatch is tried again in a later round; rounds
    # start on a fresh minute (the account's window is 60 calls a minute).
    a, b = replicas["api-a"], replicas["api-b"]
    pending, apart = list(underlyings), {}
    for round_number in range(3):
        if round_number:
            time.sleep(61 - datetime.now(timezone.utc).second)
        still = []
        for ticker in pending:
            answers = []
            for url in (a, b):
                answers.append((get_json(f"{url}/api/mcp/data/chain/{ticker}", token),
                                get_json(f"{url}/api/mcp/data/gex/{ticker}", token)))
            if any(c[0] != 200 or g[0] != 200 for c, g in answers):
                print(f"        {ticker}: {[(c[0], g[0]) for c, g in answers]}")
                still.append(ticker)
                continue
            (chain_a, gex_a), (chain_b, gex_b) = [(c[1]["data"], g[1]["data"]) for c, g in answers]
            # The chain and the exposures are separate snapshots (and events): each pair is
            # compared by its own as_of, and by its market data when of the same instant (the
            # freshness fields follow the moment of the call).
            def chain_data(c): return json.dumps([c["stock_price"], c["chains"], c["forwards"]], sort_keys=True)
            def gex_data(g): return json.dumps([g["total_gex"], g["gamma_flip"], g["gex_by_strike"]], sort_keys=True)
            gap, equal = 0.0, True
            for one, other, data in ((chain_a, chain_b, chain_data), (gex_a, gex_b, gex_data)):
                as_of = [datetime.fromisoformat(x["as_of"].replace("Z", "+00:00")) for x in (one, other)]
                gap = max(gap, abs((as_of[0] - as_of[1]).total_seconds()))
                equal = equal and (one["as_of"] != other["as_of"] or data(one) == data(other))
            apart[ticker] = gap
            if gap > 2 * CYCLE_MS / 1000 or not equal:
                print(f"        round {round_number + 1}, {ticker}: snapshots {gap:.1f} s apart, "
                      f"equal when of one instant: {equal}")
                still.append(ticker)
        pending = still
        if not pending:
            break
    check(not pending,
          f"both replicas serve the same chain and GEX, within two cycles, for "
          f"{len(underlyings) - len(pending)}/{len(underlyings)} (largest gap {max(apart.values(), default=0):.1f} s)")
    return underlyings


def new_token(optics: str, env: dict, db: str, email: str) -> str:
    """A Pro account `email` and a token of it, made with the operator commands."""
    subprocess.run([optics, "accounts", "create", "--email", email, "--plan", "pro", "--db", db],
                   text=True, check=True, env=env, capture_output=True)
    issued = subprocess.run([optics, "tokens", "create", "--email", email, "--db", db],
                            text=True, check=True, env=env, capture_output=True).stdout
    return re.search(r"token \(shown once\): (\S+)", issued).group(1)


def check_shared_accounts(replicas: dict, password: str, optics: str, env: dict, db: str) -> None:
    print("\n2. accounts and limits shared by the replicas", flush=True)
    a, b = replicas["api-a"], replicas["api-b"]
    status, headers, _ = http("POST", f"{a}/api/account/login",
                              body={"email": "dist@example.com", "password": password})
    cookie = headers.get("set-cookie", "").split(";")[0]
    check(status == 200 and cookie.startswith("optics_session="), f"signed in on A ({status})")
    status, _, body = http("POST", f"{a}/api/account/api-tokens", body={"name": "made on A"},
                           headers={"Cookie": cookie, "Origin": a})
    made = json.loads(body).get("data", {}) if status in (200, 201) else {}
    check("token" in made, f"a token created on A ({status})")
    secret, token_id = made.get("token"), made.get("id")
    status, _ = get_json(f"{b}/api/mcp/data/me/usage", secret)
    check(status == 200, f"the token made on A is accepted on B ({status})")
    status, headers, _ = http("POST", f"{b}/api/account/login",
                              body={"email": "dist@example.com", "password": password})
    cookie_b = headers.get("set-cookie", "").split(";")[0]
    status, _, _ = http("POST", f"{b}/api/account/api-tokens/{token_id}/revoke",
                        headers={"Cookie": cookie_b, "Origin": b}, body={})
    check(status == 200, f"revoked on B ({status})")
    status, _ = get_json(f"{a}/api/mcp/data/me/usage", secret)
    check(status == 401, f"the revoked token is refused on A at once ({status})")

    # One minute's window across both replicas, on an account of its own that has made no
    # call yet (windows are per token and per account), inside one calendar minute.
    limited = new_token(optics, env, db, "limits@example.com")
    while datetime.now(timezone.utc).second > 20:
        time.sleep(1)
    statuses = [get_json(f"{(a, b)[i % 2]}/api/mcp/data/me/usage", limited)[0] for i in range(61)]
    check(statuses.count(429) == 1 and statuses.count(200) == 60,
          f"61 calls over both replicas in one minute: {statuses.count(200)} × 200, "
          f"{statuses.count(429)} × 429")
    time.sleep(61 - datetime.now(timezone.utc).second)
    usage_a = get_json(f"{a}/api/mcp/data/me/usage", limited)[1].get("data", {})
    usage_b = get_json(f"{b}/api/mcp/data/me/usage", limited)[1].get("data", {})
    calls = (usage_a.get("calls_this_month", 0), usage_b.get("calls_this_month", 0))
    check(min(calls) >= 60 and abs(calls[0] - calls[1]) <= 1,
          f"the month counts the calls of both replicas as one: {calls[0]} on A, {calls[1]} on B "
          f"(units {usage_a.get('used')} / {usage_b.get('used')})")


def publication_rate(s3: str, seconds: float = 10) -> tuple[int, int, float]:
    """Snapshot files and bytes the workers put into S3 over `seconds`."""
    before = dict(s3_keys(s3, "snapshots/"))
    started = time.monotonic()
    time.sleep(seconds)
    after = dict(s3_keys(s3, "snapshots/"))
    new = [size for key, size in after.items() if key not in before]
    return len(new), sum(new), time.monotonic() - started


def chain_as_of(s3: str) -> dict[str, str]:
    return {u: key for u, (key, _) in newest_chain_versions(s3).items()}


def check_worker_failover(s3: str, workers: dict, health: dict) -> None:
    print("\n3. kill -9 of a worker", flush=True)
    books = 'optics_memory_held_items{holder="worker_books"}'
    books_of_a = lambda: metric(f"http://127.0.0.1:{health['compute-a']}/metrics", books)  # noqa: E731
    before, books_before = chain_as_of(s3), books_of_a()
    workers["compute-b"].kill9()
    killed_at = time.monotonic()
    # When compute-a's books grow: the group has given it the dead worker's partitions.
    took_partitions = []

    def watch_books():
        while not took_partitions and time.monotonic() - killed_at < SESSION_TIMEOUT_S + 30:
            if books_of_a() > books_before:
                took_partitions.append(time.monotonic() - killed_at)
            time.sleep(0.2)
    watcher = threading.Thread(target=watch_books, daemon=True)
    watcher.start()

    def all_advanced():
        now = chain_as_of(s3)
        return all(now.get(u) and now[u] > before.get(u, "") for u in before)
    try:
        wait_until("every underlying published again", all_advanced, SESSION_TIMEOUT_S + 30, every=1)
        taken = time.monotonic() - killed_at
        watcher.join()
        # The group notices at the session timeout; compute-a then reads the partitions from
        # their last commit and publishes in its next cycles.
        took = f"{took_partitions[0]:.1f} s" if took_partitions else "not seen"
        check(taken <= SESSION_TIMEOUT_S + 15,
              f"compute-a took the partitions {took} and had published every underlying again "
              f"{taken:.0f} s after the kill (session timeout {SESSION_TIMEOUT_S} s; S3 looked at every second)")
    except TimeoutError as error:
        check(False, str(error))
    books_a = books_of_a()
    workers["compute-b"].start()
    try:
        wait_until("compute-b holds books again",
                   lambda: metric(f"http://127.0.0.1:{health['compute-b']}/metrics", books) > 0,
                   SESSION_TIMEOUT_S + 60, every=1)
        check(True, f"restarted, compute-b got partitions back (compute-a held {books_a:.0f} contracts alone)")
    except TimeoutError as error:
        check(False, str(error))


def end_offsets(bootstrap: str, topics: list[str]) -> dict:
    """The end offset of every partition of `topics`, read from the broker."""
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        partitions = [TopicPartition(t, p) for t in topics for p in range(TOPICS[t])]
        return {(tp.topic, tp.partition): o for tp, o in consumer.end_offsets(partitions).items()}
    finally:
        consumer.close()


def committed_offsets(bootstrap: str, group: str) -> dict:
    """The offsets `group` has committed, by (topic, partition)."""
    from kafka import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        return {(tp.topic, tp.partition): meta.offset
                for tp, meta in admin.list_group_offsets(group)[group].items()}
    finally:
        admin.close()


def check_broker_outage(broker: Process, ingest: Process, workers: dict, replicas: dict,
                        token: str, underlyings: list[str], bootstrap: str, s3: str) -> None:
    print("\n4. the broker down for 10 s", flush=True)
    ticker = underlyings[0]
    broker.kill9()
    time.sleep(2)
    status, _ = get_json(f"{replicas['api-a']}/api/mcp/data/chain/{ticker}", token)
    check(status == 200, f"replica A serves {ticker} from its last snapshot while the broker is down ({status})")
    time.sleep(8)
    broker.start()
    before = chain_as_of(s3)
    try:
        wait_until("snapshots advancing after the outage",
                   lambda: all(v > before.get(u, "") for u, v in chain_as_of(s3).items()), 120, every=1)
        check(True, "every underlying's snapshots advance again after the broker returns")
    except TimeoutError as error:
        check(False, str(error))
    for name, process in [("ingest", ingest), *workers.items()]:
        check(process.alive(), f"{name} reconnected without exiting")

    # Stop the ingest: its flush confirms every message it published was acknowledged, and
    # it prints how many. The broker must hold exactly that many in the input topics, and the
    # workers must consume (commit) all of the quotes.
    ingest.proc.send_signal(signal.SIGTERM)
    ingest.proc.wait(timeout=120)
    printed = re.search(r"stopped: (\d+) messages delivered to the bus \((\d+) option quotes\)",
                        ingest.log())
    check(printed is not None, "the ingest stopped cleanly and reported what it delivered")
    if printed is None:
        return
    delivered = int(printed.group(1))
    inputs = [t for t in TOPICS if t != "optics.snapshots"]
    held = end_offsets(bootstrap, inputs)
    # At least once: a producer retry across the restart may store a message twice (a broker
    # that honours idempotent producers stores it once); fewer would be a loss.
    check(sum(held.values()) >= delivered,
          f"the broker holds {sum(held.values())} messages in the input topics; the ingest had "
          f"{delivered} acknowledged ({sum(held.values()) - delivered} stored twice)")
    quotes = {k: v for k, v in held.items() if k[0] == "optics.option_quotes"}
    try:
        wait_until("the workers commit every quote message",
                   lambda: all(committed_offsets(bootstrap, "optics-compute").get(k, -1) >= v
                               for k, v in quotes.items()), 120, every=2)
        check(True, f"the workers' group committed all {sum(quotes.values())} quote messages "
                    f"({printed.group(2)} quotes): none lost")
    except TimeoutError as error:
        check(False, str(error))


def check_store_outage(relay: Relay, replicas: dict, token: str, underlyings: list[str]) -> None:
    print("\n5. S3 unreachable", flush=True)
    ticker = underlyings[0]
    a = replicas["api-a"]
    at_time = f"{a}/api/mcp/data/chain-at-time/{ticker}?trade_date=2026-11-19&expiration="
    # Two expirations of the day before, found while the store answers: one read now, the other
    # first read while it is cut off (an answer already given may be served again from memory).
    status, chain = get_json(f"{a}/api/mcp/data/chain/{ticker}", token)
    listed = chain.get("data", {}).get("available_expirations", [])
    readable = []
    for expiration in listed[1:]:  # the first may have expired by the next session
        if len(readable) == 2:
            break
        if get_json(at_time + expiration, token)[0] == 200:
            readable.append(expiration)
    check(len(readable) == 2, f"history reads answer while S3 is reachable ({len(readable)} expirations)")
    if len(readable) < 2:
        return
    relay.cut()
    time.sleep(2 * POLL_MS / 1000 + 1)
    status, body = get_json(at_time + readable[1], token)
    check(status == 424 and body.get("upstream") is True, f"a history read answers 424 ({status})")
    status, _ = get_json(f"{a}/api/mcp/data/chain/{ticker}", token)
    check(status == 200, f"a live read answers 200 from the snapshot held ({status})")
    # A poll gives up once the S3 client's retries are spent (about a minute).
    cut_at = time.monotonic()
    try:
        health = wait_until("/health degraded", lambda: (h := get_json(f"{a}/health")[1])
                            .get("status") == "degraded" and h, 240, every=2)
        failing = [c["component"] for c in health["components"] if c["status"] == "failing"]
        check("snapshot_refresh" in failing,
              f"/health says degraded after {time.monotonic() - cut_at:.0f} s, failing: {failing}")
    except TimeoutError as error:
        check(False, str(error))
    relay.restore()
    try:
        wait_until("history back", lambda: get_json(at_time + readable[1], token)[0] == 200, 60)
        wait_until("health back", lambda: get_json(f"{a}/health")[1].get("status") == "ok", 60)
        check(True, "history reads and /health recovered by themselves")
    except TimeoutError as error:
        check(False, str(error))


def chain_read_latencies(url: str, token: str, tickers: list[str], count: int) -> list[float]:
    """`count` sequential chain reads over one keep-alive connection, in ms."""
    import http.client
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    latencies = []
    for i in range(count):
        started = time.perf_counter()
        connection.request("GET", f"/api/mcp/data/chain/{tickers[i % len(tickers)]}",
                           headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        response.read()
        latencies.append((time.perf_counter() - started) * 1000)
        if response.status != 200:
            raise RuntimeError(f"chain read answered {response.status}")
    connection.close()
    return latencies


def figures(moto: str, ingest: Process, run_seconds: float, replica: str, work: Path,
            optics: str, env: dict, token: str, underlyings: list[str],
            publication: tuple[int, int, float], generous: list[str]) -> None:
    print("\nfigures (loopback, this machine)", flush=True)
    printed = re.search(r"\((\d+) option quotes\)", ingest.log())
    if printed:
        print(f"  quotes through the broker to the workers: {int(printed.group(1)) / run_seconds:,.0f}/s "
              f"over {run_seconds:.0f} s (the simulator's whole rate for {UNIVERSE} underlyings; "
              f"all committed, check 4)")
    files, size, seconds = publication
    print(f"  snapshot publication into S3: {files / seconds:.1f} files/s, "
          f"{size / seconds / 1e6:.2f} MB/s (over {seconds:.0f} s)")
    # The same snapshots in a local directory, served by a third replica.
    local = work / "local-store"
    import boto3  # moto's own dependency; object reads must be signed
    client = boto3.client("s3", endpoint_url=moto, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
    for key, size in s3_keys(moto, "snapshots/"):
        target = local / key
        target.parent.mkdir(parents=True, exist_ok=True)
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        if len(body) != size:
            raise RuntimeError(f"copying {key}: {len(body)} of {size} bytes")
        target.write_bytes(body)
    port = free_port()
    # A copy taken once: it follows no events (they announce S3's newer versions).
    local_env = {k: v for k, v in dict(env, OPTICS_STORE=str(local / "snapshots")).items()
                 if k != "OPTICS_BUS"}
    local_replica = Process("api-local", [optics, "serve", "--listen", f"127.0.0.1:{port}", *generous],
                            work, local_env)
    try:
        local_url = f"http://127.0.0.1:{port}"
        wait_until("local replica", lambda: http("GET", f"{local_url}/health")[0] == 200, 900)
        for name, url in (("S3", replica), ("local directory", local_url)):
            chain_read_latencies(url, token, underlyings, 50)  # warm
            latencies = chain_read_latencies(url, token, underlyings, 2000)
            print(f"  chain read on a replica over {name}: p50 {statistics.median(latencies):.3f} ms, "
                  f"p99 {percentile(latencies, 0.99):.3f} ms ({len(latencies)} reads)")
    finally:
        local_replica.stop()


if __name__ == "__main__":
    sys.exit(main())
