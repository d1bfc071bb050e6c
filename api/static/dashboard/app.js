// The optics dashboard: signs in with the account area's session, takes the account's dashboard
// token (kept in memory only, never in a URL or in storage), and draws each panel from the same
// JSON data routes every client reads. No build step: plain script, uPlot for the charts.
"use strict";

const DATA = "/api/mcp/data";
const REFRESH_MS = 30000;
const SCREEN_DEFAULT = "high_iv_rank";
const HEAT_GREEKS = ["gamma", "delta", "vanna", "charm", "theta", "vega", "iv"];
// The term structure goes first (it picks the smile's expiration), with the expected move (the
// refresh probe); these follow.
const FOLLOWING_PANELS = ["gex", "cone", "smile", "heatmap", "flow", "earnings", "screen"];

const state = { token: null, ticker: "SPY", probeAsOf: null, charts: new Map(), timer: null, loads: 0,
                smileExpiration: null, heatGreek: "gamma" };

const $ = (selector, root) => (root || document).querySelector(selector);
const el = (tag, props, children) => {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const child of children || []) node.append(child);
  return node;
};

// --- talking to the server ---------------------------------------------------------------------

class Refused extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

async function account(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) throw new Refused(response.status, payload);
  return payload.data;
}

async function takeToken() {
  const issued = await account("POST", "/api/account/dashboard-token");
  state.token = issued.token;
}

// One data read; a refused token (rotated by another tab, expired) is replaced once.
async function data(path, retried) {
  const response = await fetch(DATA + path, {
    headers: { Authorization: `Bearer ${state.token}` },
    credentials: "omit",
  });
  const payload = await response.json().catch(() => ({}));
  if (response.status === 401 && !retried) {
    await takeToken();
    return data(path, true);
  }
  if (!response.ok || payload.success === false) throw new Refused(response.status, payload);
  return payload.data;
}

// --- formatting --------------------------------------------------------------------------------

const NY = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", hour: "2-digit",
                                               minute: "2-digit", second: "2-digit", hour12: false });
const num = (v, digits) => (v === null || v === undefined || Number.isNaN(v)) ? "—"
  : Number(v).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const money = (v) => {
  if (v === null || v === undefined) return "—";
  const a = Math.abs(v);
  if (a >= 1e9) return `${(v / 1e9).toFixed(2)}B`;
  if (a >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${(v / 1e3).toFixed(0)}K`;
  return v.toFixed(0);
};

// The panel's as-of line: the snapshot's instant (New York), the session, LIVE or EOD, and
// how old it is when live.
function asOf(panel, payload, stamp) {
  const line = $(".asof", panel);
  const instant = stamp || payload.as_of || payload.timestamp;
  const parts = [];
  if (instant) parts.push(`as of ${NY.format(new Date(instant))} ET`);
  if (payload.trade_date) parts.push(`session ${payload.trade_date}`);
  if (payload.data_freshness) parts.push(payload.data_freshness);
  let stale = false;
  if (instant && payload.data_freshness === "LIVE") {
    const age = (Date.now() - Date.parse(instant)) / 1000;
    if (age >= 0 && age < 3600) {
      parts.push(`${Math.round(age)} s old`);
      stale = age > 120;
    }
  }
  line.textContent = parts.join(" · ");
  line.classList.toggle("stale", stale);
  line.title = payload.message || "";
}

function fail(panel, error) {
  const body = $(".body", panel) || $(".plot", panel) || $("canvas", panel);
  const note = $(".note", panel);
  let text = error.message;
  if (error.status === 403 && error.body.required_tier) {
    text = `Needs the ${error.body.required_tier} plan (yours: ${error.body.your_tier || "none"}).`;
  } else if (error.status === 429) {
    text = `Rate limited: ${error.message}`;
  }
  destroyChart(panel.id);
  if (body && body.tagName !== "CANVAS") body.replaceChildren(el("p", { className: "error", textContent: text }));
  else if (note) note.replaceChildren(el("span", { className: "error", textContent: text }));
  panel.dataset.state = "error";
}

function destroyChart(id) {
  const chart = state.charts.get(id);
  if (chart) chart.destroy();
  state.charts.delete(id);
}

// A uPlot chart in the panel's plot box, replacing the one before.
function plot(panel, options, series) {
  destroyChart(panel.id);
  const box = $(".plot", panel);
  box.replaceChildren();
  const width = Math.max(300, box.clientWidth || panel.clientWidth - 32);
  const chart = new uPlot({ width, height: 260, legend: { live: false }, ...options }, series, box);
  state.charts.set(panel.id, chart);
  panel.dataset.state = "drawn";
  return chart;
}

// Vertical marks (spot, flip, walls) drawn over a chart.
function marksHook(marks) {
  return (u) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
    marks.forEach((mark, i) => {
      if (mark.x === null || mark.x === undefined) return;
      const x = Math.round(u.valToPos(mark.x, "x", true));
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
      ctx.strokeStyle = mark.color;
      ctx.setLineDash(mark.dash || []);
      ctx.lineWidth = 1.5 * devicePixelRatio;
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillStyle = mark.color;
      ctx.fillText(`${mark.label} ${num(mark.x, 2)}`, x + 4, u.bbox.top + (12 + 13 * i) * devicePixelRatio);
    });
    ctx.restore();
  };
}

function table(headers, rows) {
  const head = el("tr", {}, headers.map(([text, cls]) => el("th", { textContent: text, className: cls || "" })));
  const body = rows.map((cells) => el("tr", {}, cells.map(([text, cls]) =>
    el("td", { textContent: text, className: cls || "" }))));
  return el("table", {}, [el("thead", {}, [head]), el("tbody", {}, body)]);
}

// --- panels ------------------------------------------------------------------------------------

const panels = {
  async gex(panel, ticker) {
    const g = await data(`/gex/${ticker}?detail=compact&strikes_around=40`);
    const rows = (g.gex_profile || []).filter((r) => r.net_gex !== null);
    const strikes = rows.map((r) => r.strike);
    const net = rows.map((r) => r.net_gex / 1e6);
    const levels = g.key_levels || {};
    const marks = [
      { x: g.stock_price, label: "spot", color: "#1d2330" },
      { x: g.flip_level, label: "flip", color: "#7a3ee0", dash: [6, 4] },
      { x: levels.call_wall, label: "call wall", color: "#1f9d55", dash: [2, 3] },
      { x: levels.put_wall, label: "put wall", color: "#d64545", dash: [2, 3] },
    ];
    plot(panel, {
      scales: { x: { time: false } },
      axes: [{ label: "strike ($)" }, { label: "net GEX ($M per 1% move)", size: 70 }],
      series: [{ label: "strike" }, {
        label: "net GEX $M", stroke: "#2f5fd0", fill: "rgba(47,95,208,0.35)",
        paths: uPlot.paths.bars({ size: [0.8, 24] }), points: { show: false },
      }],
      hooks: { draw: [marksHook(marks)] },
    }, [strikes, net]);
    const trimmed = g.window ? ` · ${g.window.rows_returned} of ${g.window.rows_total} strikes around spot` : "";
    $(".note", panel).textContent = `Total ${num(g.total_gex_billions, 2)} $B per 1% move · ` +
      `${(g.implications && g.implications.volatility_regime) || ""}${trimmed}`;
    asOf(panel, g);
  },

  async "expected-move"(panel, ticker) {
    const m = await data(`/expected-move/${ticker}`);
    state.probeAsOf = m.as_of;
    const lo = m.lower_bound, hi = m.upper_bound, spot = m.stock_price;
    const span = (hi - lo) * 1.6 || 1, left = spot - span / 2;
    const pct = (v) => `${Math.max(0, Math.min(100, ((v - left) / span) * 100))}%`;
    const band = el("div", { className: "band" });
    band.style.left = pct(lo);
    band.style.width = `calc(${pct(hi)} - ${pct(lo)})`;
    const mark = el("div", { className: "spot", title: `spot ${num(spot, 2)}` });
    mark.style.left = pct(spot);
    $(".body", panel).replaceChildren(
      el("div", { className: "figures" }, [
        figure(`±${num(m.expected_move_dollars, 2)}`, `±${num(m.expected_move_pct, 2)} % by ${m.expiration} (${m.dte} d)`),
        figure(num(lo, 2), "lower bound"),
        figure(num(hi, 2), "upper bound"),
      ]),
      el("div", { className: "range", title: `${num(lo, 2)} – ${num(hi, 2)}` }, [band, mark]),
      el("p", { className: "note", textContent: `ATM straddle ${num(m.straddle_price, 2)} · spot ${num(spot, 2)}` }),
    );
    panel.dataset.state = "drawn";
    asOf(panel, m);
  },

  async term(panel, ticker) {
    const t = await data(`/term-structure/${ticker}?num_expirations=12`);
    const points = (t.term_structure || []).filter((p) => p.atm_iv !== null);
    plot(panel, {
      scales: { x: { time: false } },
      axes: [{ label: "days to expiration" }, { label: "ATM IV (%)", size: 55 }],
      series: [{ label: "DTE" }, { label: "ATM IV %", stroke: "#2f5fd0", width: 2, points: { size: 6 } }],
    }, [points.map((p) => p.dte), points.map((p) => p.atm_iv)]);
    fillSmileChoices(t.term_structure || []);
    asOf(panel, t);
  },

  async cone(panel, ticker) {
    const periods = [10, 20, 30, 60, 90, 120];
    const c = await data(`/volatility-cone/${ticker}?periods=${periods.join(",")}`);
    const cone = periods.map((p) => c.volatility_cone[`${p}d`]).filter(Boolean);
    const pick = (key) => cone.map((w) => w[key]);
    const band = (label, color, dash) => ({ label, stroke: color, dash, width: 1.5 });
    plot(panel, {
      scales: { x: { time: false } },
      axes: [{ label: "window (sessions)" }, { label: "volatility (%)", size: 55 }],
      series: [{ label: "window" },
        band("max", "#c4cad4", [4, 3]), band("75th", "#8fa3c7"),
        band("median", "#2f5fd0"), band("25th", "#8fa3c7"),
        band("min", "#c4cad4", [4, 3]),
        { label: "realised now", stroke: "#1f9d55", width: 2 },
        { label: "IV now", stroke: "#d64545", width: 2, points: { size: 6 } }],
    }, [pick("window"), pick("max"), pick("p75"), pick("p50"), pick("p25"), pick("min"),
        pick("current_rv"), pick("iv")]);
    $(".note", panel).textContent = `30-day IV ${num(c.iv30d, 1)} % · realised ${num(c.realized_vol_30d, 1)} % · ` +
      `${c.sessions} sessions of history`;
    asOf(panel, c);
  },

  async smile(panel, ticker) {
    const expiration = state.smileExpiration;
    if (!expiration) throw new Error("no expiration with an ATM IV yet");
    const chain = await data(`/chain/${ticker}?expiration=${expiration}&strikes_around=25`);
    const rows = (chain.chains && chain.chains[expiration]) || [];
    const strikes = rows.map((r) => r["Strike"]);
    const pts = (key) => rows.map((r) => (r[key] === null || r[key] === undefined) ? null : r[key] * 100);
    plot(panel, {
      scales: { x: { time: false } },
      axes: [{ label: "strike ($)" }, { label: "IV (%)", size: 55 }],
      series: [{ label: "strike" },
        { label: "call IV %", stroke: "#1f9d55", width: 2, spanGaps: true },
        { label: "put IV %", stroke: "#d64545", width: 2, spanGaps: true }],
      hooks: { draw: [marksHook([{ x: chain.stock_price, label: "spot", color: "#1d2330" }])] },
    }, [strikes, pts("IV Call"), pts("IV Put")]);
    $(".note", panel).textContent = `Expiration ${expiration}; ${rows.length} strikes around spot.`;
    asOf(panel, chain);
  },

  async heatmap(panel, ticker) {
    const h = await data(`/greeks-heatmap/${ticker}?option_type=calls&greek=${state.heatGreek}`);
    drawHeatmap($("canvas", panel), h);
    $(".note", panel).textContent = `Calls, ${h.greek}${h.units ? ` (${h.units})` : ""}: ` +
      `${h.expirations.length} expirations × ${h.strikes.length} strikes within 15 % of spot ` +
      `${num(h.stock_price, 2)}; blue below zero, red above.`;
    panel.dataset.state = "drawn";
    asOf(panel, h);
  },

  async flow(panel, ticker) {
    const f = await data(`/flow/${ticker}?detail=compact&limit=8`);
    const s = f.summary || {};
    const total = Math.abs(s.total_call_premium || 0) + Math.abs(s.total_put_premium || 0) || 1;
    const premium = (label, cls, v) => {
      const b = el("span", { className: `bar ${cls}` });
      b.style.width = `${(Math.abs(v || 0) / total) * 100}%`;
      return el("div", { className: "premium" }, [el("span", { textContent: `${label} $${money(v)}` }),
        el("span", { className: "track" }, [b])]);
    };
    const head = [["side"], ["strike", "num"], ["expiration"], ["premium $", "num"], ["volume", "num"], ["vol/OI", "num"]];
    const list = (title, rows, none) => el("div", {}, [el("h3", { textContent: title }), rows && rows.length
      ? table(head, rows.map((r) => [[r.type], [`${num(r.strike, 2)}`, "num"], [r.expiration],
        [money(r.premium), "num"], [num(r.volume, 0), "num"], [num(r.volume_oi_ratio, 1), "num"]]))
      : el("p", { className: "muted", textContent: none })]);
    $(".body", panel).replaceChildren(
      premium("Calls", "call", s.total_call_premium),
      premium("Puts", "put", s.total_put_premium),
      el("p", { className: "note", textContent: `put/call ${num(s.put_call_ratio, 2)} · ${s.sentiment || ""}` +
        (s.unusual_rule ? ` · unusual: ${s.unusual_rule}` : "") }),
      el("div", { className: "flow-grid" }, [
        list("Largest trades", f.largest_flows, "No trades yet this session."),
        list("Unusual activity", f.unusual_activity, "No contract trades unusually now."),
      ]),
    );
    panel.dataset.state = "drawn";
    asOf(panel, f);
  },

  async earnings(panel) {
    const e = await data("/earnings-calendar?days_ahead=7");
    const rows = (e.earnings || []).slice(0, 15).map((r) => [
      [r.symbol], [r.date], [r.timing], [r.implied_move === null ? "—" : `±${num(r.implied_move, 1)} %`, "num"],
      [r.hist_avg_move === null ? "—" : `${num(r.hist_avg_move, 1)} %`, "num"]]);
    $(".body", panel).replaceChildren(rows.length
      ? table([["symbol"], ["date"], ["when"], ["implied", "num"], ["past avg", "num"]], rows)
      : el("p", { className: "muted", textContent: "No reports in the next 7 days." }));
    if ((e.earnings || []).length > rows.length) {
      $(".body", panel).append(el("p", { className: "note", textContent: `${e.total_count} reports in all; the first 15 shown.` }));
    }
    panel.dataset.state = "drawn";
    asOf(panel, e, e.timestamp);
  },

  async screen(panel) {
    const select = $("#screen-type");
    if (!select.options.length) {
      const list = await data("/screen?screen_type=list");
      for (const screen of list.screens || []) {
        select.append(el("option", { value: screen.name, textContent: screen.name.replaceAll("_", " "), title: screen.description }));
      }
      select.value = SCREEN_DEFAULT;
    }
    const s = await data(`/screen?screen_type=${encodeURIComponent(select.value || SCREEN_DEFAULT)}&limit=10`);
    const rows = (s.results || []).map((r) => [[r.ticker], [num(r.price, 2), "num"], [num(r.iv30d, 1), "num"],
      [num(r.iv_percentile, 0), "num"], [num(r.vrp, 1), "num"], [num(r.metric_value, 2), "num"]]);
    $(".body", panel).replaceChildren(
      el("p", { className: "note", textContent: s.rule || s.screen_description || "" }),
      rows.length ? table([["ticker"], ["price", "num"], ["IV30 %", "num"], ["IV pctl", "num"], ["VRP", "num"], [s.metric || "metric", "num"]], rows)
        : el("p", { className: "muted", textContent: "No underlying passes this screen now." }),
      el("p", { className: "note", textContent: `${s.total_matches} of ${s.total_scanned} underlyings match.` }),
    );
    panel.dataset.state = "drawn";
    asOf(panel, s);
  },
};

function figure(value, label) {
  return el("div", { className: "figure" }, [el("b", { textContent: value }), el("span", { textContent: label })]);
}

// Chooses the smile's expiration: the first with a week or more left (a front-week smile is
// mostly noise), else the nearest; kept while it is still listed.
function fillSmileChoices(term) {
  const listed = term.filter((p) => p.atm_iv !== null);
  if (state.smileExpiration && listed.some((p) => p.expiration === state.smileExpiration)) return;
  const pick = listed.find((p) => p.dte >= 7) || listed[0];
  state.smileExpiration = pick ? pick.expiration : null;
}

// A diverging heat map of the chosen greek: expirations down, strikes across.
function drawHeatmap(canvas, h) {
  const ctx = canvas.getContext("2d");
  const width = canvas.width, height = canvas.height;
  const left = 110, top = 8, bottom = 28;
  ctx.clearRect(0, 0, width, height);
  const rows = h.greek_matrix || [], cols = h.strikes || [];
  if (!rows.length || !cols.length) {
    ctx.fillText("No grid for this greek.", left, top + 20);
    return;
  }
  let max = 0;
  for (const row of rows) for (const v of row) if (v !== null) max = Math.max(max, Math.abs(v));
  const cw = (width - left - 8) / cols.length, ch = (height - top - bottom) / rows.length;
  rows.forEach((row, i) => {
    row.forEach((v, j) => {
      if (v === null) { ctx.fillStyle = "#f3f5f8"; } else {
        const t = max ? v / max : 0, a = Math.min(1, Math.abs(t));
        ctx.fillStyle = t >= 0 ? `rgba(214,69,69,${0.08 + 0.92 * a})` : `rgba(47,95,208,${0.08 + 0.92 * a})`;
      }
      ctx.fillRect(left + j * cw, top + i * ch, Math.ceil(cw), Math.ceil(ch));
    });
    ctx.fillStyle = "#1d2330";
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(h.expirations[i], 4, top + i * ch + ch / 2 + 4);
  });
  ctx.fillStyle = "#5b6474";
  const every = Math.max(1, Math.ceil(cols.length / 12));
  cols.forEach((k, j) => {
    if (j % every === 0 && left + j * cw + 30 < width) ctx.fillText(num(k, 0), left + j * cw, height - 10);
  });
  const spotColumn = cols.findIndex((k) => k >= h.stock_price);
  if (spotColumn >= 0) {
    ctx.strokeStyle = "#1d2330";
    ctx.beginPath();
    ctx.moveTo(left + spotColumn * cw, top);
    ctx.lineTo(left + spotColumn * cw, height - bottom);
    ctx.stroke();
  }
}

// --- the page ----------------------------------------------------------------------------------

// A panel's state says what it shows: "loading" only until its ticker's first answer (set by
// loadAll); a refresh keeps "drawn" until the new answer replaces it.
async function loadPanel(name, ticker) {
  const panel = document.querySelector(`[data-panel="${name}"]`);
  try {
    await panels[name](panel, ticker);
  } catch (error) {
    fail(panel, error);
  }
}

// Only the newest load marks the page loaded: a ticker picked while the first load runs starts
// a second one, and the first finishing must not report panels the second has reset.
async function loadAll() {
  const ticker = state.ticker;
  const load = ++state.loads;
  document.title = `optics — ${ticker}`;
  delete document.body.dataset.loaded;
  for (const panel of document.querySelectorAll("[data-panel]")) panel.dataset.state = "loading";
  await Promise.all([loadPanel("term", ticker), loadPanel("expected-move", ticker)]);
  await Promise.all(FOLLOWING_PANELS.map((name) => loadPanel(name, ticker)));
  if (state.loads === load) document.body.dataset.loaded = ticker;
}

// Every 30 s while the page is visible: the expected move is read as a probe, and the other
// panels only when its snapshot changed (a new cycle or a new session).
async function refresh() {
  if (document.hidden || !state.token) return;
  const before = state.probeAsOf;
  await loadPanel("expected-move", state.ticker);
  if (state.probeAsOf !== before) {
    await loadPanel("term", state.ticker);
    await Promise.all(FOLLOWING_PANELS.map((name) => loadPanel(name, state.ticker)));
  }
}

async function suggest(text) {
  if (!text || text.length > 12) return;
  try {
    const found = await data(`/search?q=${encodeURIComponent(text)}&limit=8`);
    $("#ticker-choices").replaceChildren(...(found.results || []).map((r) =>
      el("option", { value: r.symbol, label: `${r.symbol} — ${r.name}` })));
  } catch (error) {
    // Suggestions are a convenience; the ticker form still works without them.
  }
}

function showSignedIn(email) {
  $("#sign-in").hidden = true;
  $("#ticker-form").hidden = false;
  $("#session-nav").hidden = false;
  $("#panels").hidden = false;
  $("#who").textContent = email || "";
}

async function start() {
  try {
    const me = await account("GET", "/api/account");
    await takeToken();
    showSignedIn(me.email);
  } catch (error) {
    if (error.status === 401) {
      $("#sign-in").hidden = false;
      return;
    }
    showError(error);
    return;
  }
  await loadAll();
  clearInterval(state.timer);
  state.timer = setInterval(refresh, REFRESH_MS);
}

function showError(error) {
  const line = $("#page-error");
  line.textContent = error.status === 409
    ? `${error.message} — revoke a token on the account page to make room for the dashboard's.`
    : error.message;
  line.hidden = false;
}

document.addEventListener("DOMContentLoaded", () => {
  $("#sign-in-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("#sign-in-error").textContent = "";
    try {
      await account("POST", "/api/account/login", { email: $("#email").value, password: $("#password").value });
      $("#password").value = "";
      await start();
    } catch (error) {
      $("#sign-in-error").textContent = error.message;
    }
  });
  $("#sign-out").addEventListener("click", async () => {
    await account("POST", "/api/account/logout").catch(() => {});
    state.token = null;
    location.reload();
  });
  $("#ticker-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const ticker = $("#ticker").value.trim().toUpperCase();
    if (!/^[A-Z0-9.^]{1,12}$/.test(ticker)) return;
    state.ticker = ticker;
    state.smileExpiration = null;
    loadAll();
  });
  let typing = null;
  $("#ticker").addEventListener("input", (event) => {
    clearTimeout(typing);
    typing = setTimeout(() => suggest(event.target.value.trim()), 250);
  });
  $("#screen-type").addEventListener("change", () => loadPanel("screen", state.ticker));
  const greek = el("select", { id: "heat-greek", ariaLabel: "Greek" },
    HEAT_GREEKS.map((g) => el("option", { value: g, textContent: g })));
  greek.addEventListener("change", () => { state.heatGreek = greek.value; loadPanel("heatmap", state.ticker); });
  $("#panel-heatmap h2").append(greek);
  let resizing = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      for (const [id, chart] of state.charts) {
        const box = $(".plot", document.getElementById(id));
        chart.setSize({ width: Math.max(300, box.clientWidth), height: 260 });
      }
    }, 200);
  });
  start();
});
