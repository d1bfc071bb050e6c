#!/usr/bin/env python3
"""Drives optics' MCP tool server with the official MCP Python SDK, as an assistant would.

Starts `optics run` on a fresh data directory (port 0, 25 underlyings, a fixed market clock),
then over BOTH transports -- stdio (`optics mcp`, token from OPTICS_API_TOKEN) and streamable
HTTP (`/mcp-server` with the bearer token) --

  * lists the tools and checks that all 43 of the reference's tool table are there with the
    reference's argument names, read-only annotations and an argument schema;
  * calls every tool (multi-view tools once per view, batch tools with `tickers`) and asserts
    success and that each field the reference records document for the endpoint behind the
    call appears in the structured result;
  * checks the errors an assistant must be able to act on: an uncovered ticker, a bad
    argument, an unknown tool.

Then, as a hosted connector would, the SDK's own OAuth client connects to `/mcp-server` with
no token: discovery from the 401, dynamic registration, the consent page (signed in and
approved here by HTTP calls, as the page's script makes them), the code exchanged with its
PKCE verifier, a tool call with the token it got; the token is revoked on the account page
and the next call must be refused.

Run by `make test` (target `mcp-clients`) in the venv the Makefile creates. Exit status 0 when
every check passed; every failure is printed.

    python scripts/mcp/check_tools.py --optics target/debug/optics \
        --records ../shared/spec/reference-records.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.auth import OAuthClientProvider
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from urllib.parse import parse_qsl, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from optics_run import GENEROUS_LIMITS, start_run  # noqa: E402

# Fields the records name that a payload carries only when the data has them; each with the
# reason it may be absent from this test's simulated market.
CONDITIONAL_FIELDS = {
    # The volume-profile tops and the flow tops are lists that may be empty.
    # The seeded market has no vendor forecast surface or HV forecast.
    ("hv-regimes", "forecast"),
}

# How long a call is retried while the server says "retry after N s".
RETRY_WITHIN_SECS = 600

FAILURES: list[str] = []


def fail(message: str) -> None:
    FAILURES.append(message)
    print(f"FAIL {message}", flush=True)


def documented_keys(records: dict) -> dict[str, set[tuple[str, str | None]]]:
    """Per endpoint slug, the key names its records' field list documents, each with the list
    it sits in (`earnings[].symbol` -> ("symbol", "earnings")), or None."""
    out: dict[str, set[tuple[str, str | None]]] = {}
    for endpoint in records["endpoints"]:
        keys: set[tuple[str, str | None]] = set()
        for field, _meaning in endpoint["fields"]:
            items = field.split(", ")
            head = re.match(r"([A-Za-z0-9_]+)\[\]", items[0])
            parent = head.group(1) if head else None
            for item in items:
                for part in re.split(r" to ", item):
                    for segment in re.split(r"[.\[\]]+", part):
                        segment = segment.strip()
                        if not segment or "<" in segment or "{" in segment:
                            continue
                        # Prose ("and the Put twins", "Volume and OI columns") is not a key.
                        if re.search(r"\b(and|the|twins|columns)\b", segment):
                            continue
                        if re.fullmatch(r"[A-Za-z0-9_ ]+", segment):
                            keys.add((segment, None if segment == parent else parent))
        out[endpoint["slug"]] = keys
    return out


def empty_list(data: dict, name: str | None) -> bool:
    """Whether `name` is a list with no rows anywhere in the payload (its row fields cannot be
    shown, and the list itself was checked as a key)."""
    if name is None:
        return False
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if value.get(name) == []:
                return True
            stack.extend(value.values())
    return False


def keys_in(value, depth: int = 0, found: set[str] | None = None) -> set[str]:
    """Every object key anywhere in a JSON value."""
    found = set() if found is None else found
    if depth > 12:
        return found
    if isinstance(value, dict):
        for k, v in value.items():
            found.add(k)
            keys_in(v, depth + 1, found)
    elif isinstance(value, list):
        for v in value[:50]:
            keys_in(v, depth + 1, found)
    return found


class Caller:
    def __init__(self, session: ClientSession, transport: str):
        self.session = session
        self.transport = transport

    async def call(self, tool: str, args: dict) -> dict:
        # As an assistant would: on "retry after N s" (the screens' universe table still being
        # built, a busy slot), wait and call again. The first table of a debug build on a busy
        # 2-core machine can take minutes (the e2e screens test allows ten).
        deadline = asyncio.get_running_loop().time() + RETRY_WITHIN_SECS
        while True:
            try:
                result = await self.session.call_tool(tool, args)
            except Exception as error:  # a JSON-RPC or transport error: report it, go on
                fail(f"[{self.transport}] {tool} {args}: {type(error).__name__}: {error} "
                     f"{getattr(error, 'data', '')}")
                return {}
            text = result.content[0].text if result.content else ""
            retry = re.search(r"Retry after (\d+) s", text) if result.is_error else None
            if retry is None or int(retry.group(1)) > 30:
                break
            if asyncio.get_running_loop().time() + int(retry.group(1)) > deadline:
                break
            await asyncio.sleep(int(retry.group(1)))
        if result.is_error:
            fail(f"[{self.transport}] {tool} {args}: error: {text[:300]}")
            return {}
        if not isinstance(result.structured_content, dict):
            fail(f"[{self.transport}] {tool}: no structured content")
            return {}
        if not text:
            fail(f"[{self.transport}] {tool}: no text summary")
        return result.structured_content


async def check_session(session: ClientSession, transport: str, records: dict) -> None:
    await session.initialize()
    listed = await session.list_tools()
    tools = {t.name: t for t in listed.tools}
    for spec in records["tools"]:
        tool = tools.get(spec["name"])
        if tool is None:
            fail(f"[{transport}] tool {spec['name']} not listed")
            continue
        properties = tool.input_schema.get("properties", {})
        for arg in spec["arguments"]:
            if arg not in properties:
                fail(f"[{transport}] {spec['name']}: argument {arg} missing from its schema")
        if not (tool.annotations and tool.annotations.read_only_hint):
            fail(f"[{transport}] {spec['name']}: not annotated read-only")
        if not tool.description or len(tool.description) < 60:
            fail(f"[{transport}] {spec['name']}: description too short")
    print(f"[{transport}] {len(tools)} tools listed", flush=True)

    documented = documented_keys(records)
    c = Caller(session, transport)

    # Live facts the later calls need: a listed expiration and strikes near the money.
    expirations = (await c.call("get_expirations", {"ticker": "SPY"})).get("expirations", [])
    chain = await c.call("get_options_chain", {"ticker": "SPY", "strikes_around": 2})
    nearest = next(iter(chain.get("chains", {}).values()), [])
    strikes = [row["Strike"] for row in nearest]
    price = chain.get("stock_price", 0.0)
    if len(strikes) < 4 or not expirations:
        fail(f"[{transport}] chain/expirations too small to continue: {strikes} {expirations[:3]}")
        return
    trade_date = "2026-11-19"
    past_expiration = next(e for e in expirations if e > trade_date)
    far = expirations[min(5, len(expirations) - 1)]
    positions = [
        {"ticker": "SPY", "position_type": "CALL", "quantity": 2, "strike": strikes[2],
         "expiration": far, "entry_price": 5.0, "current_price": 5.5, "delta": 0.52,
         "gamma": 0.02, "theta": -0.35, "vega": 0.45, "iv": 0.17},
        {"ticker": "AAPL", "position_type": "STOCK", "quantity": 100, "entry_price": 200.0,
         "current_price": 210.0},
    ]

    # (tool, arguments, endpoint whose documented fields the answer must carry)
    calls = [
        ("get_iv_rank", {"ticker": "AAPL"}, "iv-rank"),
        ("get_iv_rank", {"tickers": "AAPL,MSFT,SPY"}, "iv-rank-batch"),
        ("get_volatility_cone", {"ticker": "SPY"}, "volatility-cone"),
        ("get_volatility_risk_premium", {"ticker": "SPY"}, "vrp"),
        ("get_volatility_risk_premium", {"ticker": "SPY", "view": "timeseries"}, "vrp-timeseries"),
        ("get_volatility_risk_premium", {"ticker": "SPY", "view": "expirations"}, "vrp-expirations"),
        ("get_term_structure", {"ticker": "SPY"}, "term-structure"),
        ("find_iv_opportunities", {"ticker": "AAPL", "z_score_threshold": 1.5}, "iv-opportunities"),
        ("get_vix_snapshot", {}, "vix"),
        ("get_monies_surface", {"ticker": "SPY"}, "monies"),
        ("get_options_chain", {"ticker": "SPY"}, "chain"),
        ("get_expirations", {"ticker": "SPY"}, "expirations"),
        ("get_options_by_delta", {"ticker": "SPY", "target_delta": "0.25", "option_type": "PUT"}, "options-by-delta"),
        ("get_stock_price", {"ticker": "aapl"}, "stock"),
        ("get_historical_chain", {"ticker": "SPY", "expiration": past_expiration, "trade_date": trade_date}, "chain-at-time"),
        ("simulate_option_chain", {"ticker": "SPY", "sim_price": price * 1.02, "sim_dte": 5, "iv_adjustment": 2}, "simulate-chain"),
        ("search_tickers", {"query": "app", "limit": 5}, "search"),
        ("calculate_expected_move", {"ticker": "SPY"}, "expected-move"),
        ("calculate_expected_move", {"tickers": "SPY,QQQ"}, "expected-move-batch"),
        ("get_greeks_heatmap", {"ticker": "SPY", "greek": "gamma"}, "greeks-heatmap"),
        ("get_charm_exposure", {"ticker": "SPY"}, "charm"),
        ("get_third_order_greeks", {"ticker": "SPY"}, "third-order-greeks"),
        ("calculate_portfolio_greeks", {"positions": json.dumps(positions)}, "portfolio-greeks"),
        ("calculate_probability_of_profit", {
            "legs": [{"option_type": "call", "action": "buy", "strike": strikes[1], "iv": 16,
                      "premium": 3.0, "quantity": 1}],
            "stock_price": price, "days_to_exp": "10"}, "pop"),
        ("get_gex", {"ticker": "SPY"}, "gex"),
        ("get_gex", {"tickers": "SPY,QQQ"}, "gex-batch"),
        ("get_cross_index_gex", {}, "cross-index-gex"),
        ("get_zero_dte", {"ticker": "SPY"}, "zero-dte"),
        ("get_max_pain", {"ticker": "SPY"}, "max-pain"),
        ("get_volume_profile", {"ticker": "SPY"}, "volume-profile"),
        ("get_options_flow", {"ticker": "SPY"}, "flow"),
        ("get_smart_money_flow", {"ticker": "SPY"}, "smart-money"),
        ("scan_volatility_arb", {}, "vol-arb-scan"),
        ("screen_market", {"screen_type": "high_iv_rank", "min_market_cap": 0, "limit": 5}, "screen"),
        ("get_market_overview", {}, "market-overview"),
        ("scan_relative_value", {"threshold": 0.5}, "relative-value-scan"),
        ("get_earnings_calendar", {"days_ahead": 90}, "earnings-calendar"),
        ("get_economic_calendar", {}, "economic-calendar"),
        ("analyze_earnings_history", {"ticker": "AAPL"}, "earnings-history"),
        ("get_earnings_move_analysis", {"ticker": "AAPL"}, "mispricing-assessment"),
        ("get_earnings_move_analysis", {"ticker": "AAPL", "analysis": "historical_moves"}, "historical-moves"),
        ("get_earnings_move_analysis", {"ticker": "AAPL", "analysis": "expected_vs_actual"}, "expected-vs-actual"),
        ("get_earnings_move_analysis", {"ticker": "AAPL", "analysis": "verdict"}, "earnings-verdict"),
        ("get_earnings_move_analysis", {"ticker": "AAPL", "analysis": "seasonality"}, "seasonality"),
        ("get_earnings_move_analysis", {"ticker": "AAPL", "analysis": "post_drift"}, "post-earnings-drift"),
        ("get_earnings_move_analysis", {"ticker": "AAPL", "analysis": "iv_crush"}, "iv-crush"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "skew"}, "skew"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "dividends"}, "dividend"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "borrow_rate"}, "borrow-rate"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "correlation"}, "correlation"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "correlation", "compare_with": "MSFT"}, "correlation-compare"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "hv_regimes"}, "hv-regimes"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "price_context"}, "price-context"),
        ("get_ticker_analytics", {"ticker": "AAPL", "analysis": "relative_value"}, "relative-value"),
        ("get_ticker_analytics", {"ticker": "SPY", "analysis": "greeks_exposure"}, "greeks-exposure"),
        ("get_orats_cores", {"ticker": "AAPL"}, "cores"),
        ("build_strategy", {"ticker": "SPY", "strategy_type": "iron_condor"}, "build-strategy"),
        ("analyze_strategy", {"ticker": "SPY", "legs": f"BUY 1 C {strikes[1]:g}, SELL 1 C {strikes[2]:g}"}, "analyze-strategy"),
        ("optimize_strategy", {"ticker": "SPY", "strategy_type": "iron_condor"}, "optimize-strategy"),
        ("run_scenario_analysis", {"positions": positions, "stock_move_pct": -5, "iv_change_pct": "3", "days_forward": 2}, "scenario-analysis"),
        ("generate_stress_tests", {"positions": positions}, "stress-tests"),
        ("get_hedge_recommendations", {"positions": positions}, "hedge-recommendations"),
    ]
    called = set()
    for tool, args, slug in calls:
        called.add(tool)
        data = await c.call(tool, args)
        if not data:
            continue
        present = keys_in(data)
        for key, parent in sorted(documented.get(slug, set()), key=str):
            if key in present or (slug, key) in CONDITIONAL_FIELDS or empty_list(data, parent):
                continue
            fail(f"[{transport}] {tool} ({slug}): documented field {key!r} missing")
    for spec in records["tools"]:
        if spec["name"] not in called:
            fail(f"[{transport}] tool {spec['name']} never called")

    # help answers from the served reference.
    helped = await c.call("help", {"topic": "get_gex"})
    if not helped.get("reference"):
        fail(f"[{transport}] help get_gex quoted no reference section")

    # Errors an assistant can act on.
    result = await session.call_tool("get_stock_price", {"ticker": "ZZZZQ"})
    if not result.is_error or "not covered" not in result.content[0].text:
        fail(f"[{transport}] uncovered ticker: {result.content[0].text[:200]}")
    result = await session.call_tool("get_iv_rank", {"ticker": "SPY", "lookback_days": "a year"})
    if not result.is_error or "lookback_days" not in result.content[0].text:
        fail(f"[{transport}] bad argument: {result.content[0].text[:200]}")
    try:
        result = await session.call_tool("no_such_tool", {})
        if not result.is_error:
            fail(f"[{transport}] unknown tool answered")
    except Exception:  # the SDK raises on a JSON-RPC error: the expected answer
        pass
    print(f"[{transport}] {len(calls)} calls checked", flush=True)


class MemoryStorage:
    """The SDK's token storage, kept in memory for one check."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


CONNECTOR_EMAIL = "connector@example.com"
CONNECTOR_PASSWORD = "a long enough connector password"
CONNECTOR_NAME = "optics client check"


async def check_oauth(optics: str, data_dir: Path, address: str) -> None:
    """The hosted-connector flow with the SDK's OAuth client (see the module docs)."""
    created = subprocess.run(
        [optics, "accounts", "create", "--email", CONNECTOR_EMAIL, "--plan", "pro",
         "--password-stdin", "--data-dir", str(data_dir)],
        input=CONNECTOR_PASSWORD + "\n", capture_output=True, text=True, timeout=120)
    if created.returncode != 0:
        fail(f"oauth: creating the account failed: {created.stderr.strip()}")
        return
    base = f"http://{address}"
    browser = httpx2.AsyncClient(base_url=base, timeout=60)
    redirected: list[str] = []

    async def approve_in_browser(authorization_url: str) -> None:
        # What the consent page does: sign in, then post the decision with the session cookie.
        page = await browser.get(authorization_url)
        if page.status_code != 200 or CONNECTOR_NAME not in page.text:
            fail(f"oauth: consent page {page.status_code}")
        login = await browser.post("/api/account/login",
                                   json={"email": CONNECTOR_EMAIL, "password": CONNECTOR_PASSWORD})
        if login.status_code != 200:
            fail(f"oauth: sign-in {login.status_code} {login.text[:200]}")
        request = dict(parse_qsl(urlsplit(authorization_url).query))
        decision = await browser.post("/oauth/authorize", json={**request, "approve": True})
        if decision.status_code != 200:
            fail(f"oauth: approval {decision.status_code} {decision.text[:300]}")
            return
        redirected.append(decision.json()["redirect_to"])

    async def callback() -> AuthorizationCodeResult:
        if not redirected:
            raise RuntimeError("the approval did not redirect")
        params = dict(parse_qsl(urlsplit(redirected[-1]).query))
        return AuthorizationCodeResult(code=params.get("code", ""), state=params.get("state"),
                                       iss=params.get("iss"))

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=f"{base}/mcp-server",
        client_metadata=OAuthClientMetadata(
            client_name=CONNECTOR_NAME,
            redirect_uris=["http://127.0.0.1:33418/callback"],
            grant_types=["authorization_code"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=approve_in_browser,
        callback_handler=callback,
    )
    try:
        async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
            async with streamable_http_client(f"{base}/mcp-server", http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    if len(listed.tools) < 43:
                        fail(f"oauth: {len(listed.tools)} tools listed")
                    result = await session.call_tool("get_expirations", {"ticker": "SPY"})
                    if result.is_error:
                        fail(f"oauth: tool call failed: {result.content}")
    except Exception as error:  # noqa: BLE001 - every failure is reported, not raised
        fail(f"oauth: the SDK's flow failed: {error!r}")
        await browser.aclose()
        return
    token = storage.tokens.access_token if storage.tokens else ""
    if not token or not redirected:
        fail("oauth: no token was obtained through the consent page")
    # Revoked on the account page, the token no longer reaches the tool server.
    tokens = (await browser.get("/api/account/api-tokens")).json()["data"]
    mine = [t for t in tokens if t["name"] == f"MCP connector: {CONNECTOR_NAME}"]
    if len(mine) != 1 or mine[0]["status"] != "active":
        fail(f"oauth: the connector's token is not listed as active: {tokens}")
    else:
        await browser.delete(f"/api/account/api-tokens/{mine[0]['id']}")
    after = await browser.post(
        "/mcp-server", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream",
                 "Authorization": f"Bearer {token}"})
    if after.status_code != 401 or 'error="invalid_token"' not in after.headers.get("www-authenticate", ""):
        fail(f"oauth: a revoked connector token got {after.status_code}")
    await browser.aclose()


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--optics", required=True)
    parser.add_argument("--records", required=True)
    options = parser.parse_args()
    records = json.loads(Path(options.records).read_text())
    optics = str(Path(options.optics).resolve())
    with tempfile.TemporaryDirectory(prefix="optics-mcp-") as tmp:
        data_dir = Path(tmp)
        process, address = start_run(optics, data_dir)
        try:
            token = (data_dir / "api-token").read_text().strip()
            env = {"OPTICS_API_TOKEN": token, "PATH": os.environ.get("PATH", ""),
                   "RUST_LOG": "warn"}
            stdio = StdioServerParameters(
                command=optics, args=["mcp", *GENEROUS_LIMITS, "--data-dir", str(data_dir)],
                env=env)
            async with stdio_client(stdio) as (read, write):
                async with ClientSession(read, write) as session:
                    await check_session(session, "stdio", records)
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with streamable_http_client(
                        f"http://{address}/mcp-server", http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        await check_session(session, "http", records)
            # Without a token the connector answers 401 with the discovery challenge.
            async with httpx2.AsyncClient(timeout=30) as http:
                response = await http.post(
                    f"http://{address}/mcp-server",
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    headers={"Accept": "application/json, text/event-stream"})
                challenge = response.headers.get("www-authenticate", "")
                if response.status_code != 401 or "resource_metadata=" not in challenge:
                    fail(f"no-token request: {response.status_code} {challenge!r}")
            await check_oauth(optics, data_dir, address)
        finally:
            process.terminate()
            process.wait(timeout=30)
    if FAILURES:
        print(f"{len(FAILURES)} MCP client check(s) failed", file=sys.stderr)
        return 1
    print("MCP client checks passed (stdio, streamable HTTP, and the OAuth connector flow)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
