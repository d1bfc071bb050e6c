//! A chain snapshot: every listed contract of one underlying at one instant, quoted bid/ask
//! around its model value on the underlying's [`Surface`].
//!
//! # Model value
//! For each listed expiration ([`listing::expirations`]) and strike ([`listing::strike_grid`]
//! around the previous close),
//! with `T` = [`years_to_expiry`] (calendar time to the 16:00 New York close / 365):
//! - forward `F = S·e^{(r−q)T}` (q = the underlying's dividend yield), `k = ln(K/F)`;
//! - model IV = `surface.iv(k, T)`;
//! - model price: Black-76 on F for underlyings `priced_on_forward` (cash indices), BSM on S
//!   with yield q otherwise. American-style equity options are valued as European (the
//!   early-exercise premium of calls on low-yield stocks and of near-money puts at these rates
//!   is small; it is a known simplification of this first increment), so put–call parity holds
//!   exactly on the model values.
//!
//! # Bid and ask
//! - Tick: equities and ETFs $0.01 below $3 and $0.05 from $3 (index ETFs SPY, QQQ, IWM, DIA:
//!   $0.01 throughout, as in the penny program); cash indices $0.05 below $3 and $0.10 from $3.
//! - Full width `max(tick, L · (0.004 · value + 0.02 · vega))`, `vega` per vol point, `L` a
//!   liquidity factor (index ETFs 0.5, cash indices 1, sector ETFs 1.5, stocks 1.5–4 by market
//!   cap, synthetic names 3). The bid is `value − width/2` rounded down to a tick, the ask
//!   `value + width/2` rounded up, so `bid ≤ value ≤ ask` always.
//! - No-bid wings: when the value is below one tick, or the rounded bid is not positive, the
//!   bid is 0 with size 0 (the ask stays at least one tick).
//! - Sizes: seeded per contract and instant, log-uniform up to a class maximum, larger near the
//!   money.
//!
//! # Open interest and volume (a simple, honest placeholder model)
//! - Open interest at the close of `oi_date` (the previous trading day) is a deterministic
//!   function of the contract and the seed: a class base level × a bell in standardised
//!   moneyness (`ln(K / previous close) / (base_iv·√(days/365))`, fixed for the session;
//!   out-of-the-money side weighted up, in-the-money side down) × a
//!   round-strike factor (×2.5 on multiples of a "round unit" of a tenth of spot's order of
//!   magnitude, ×1.5 on half-units) × an expiration-family factor (standard monthlies and
//!   LEAPS ×2, quarterlies ×1.2, weeklies and dailies ×0.6) × a persistent log-normal contract
//!   factor × a day factor seeded by `oi_date`. It is not yet an accumulation of yesterday's
//!   open interest and net opening volume: that is the history generator's job.
//! - Session volume: a day total of `OI × turnover` (turnover 1–25 %, higher near the money and
//!   for short expirations), or, with probability 0.4 %, an unusual burst of 3–12 × max(OI, 100)
//!   contracts (volume far above open interest). The volume at the instant is the day total ×
//!   the U-shaped intraday fraction `f(p) = p + 0.3·sin(2πp)/(2π)` of the session elapsed `p`,
//!   so it only grows during the session.
//! - `last` is the model value rounded to a tick and kept within the quote, when volume > 0.
//!
//! Deterministic: the output depends only on the [`ChainSpec`] (no wall clock, no global
//! state); strings are hashed with FNV-1a, whose output is fixed.

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, price};
use optics_compute::time::{NyseCalendar, years_to_expiry};
use optics_schemas::{AssetClass, OptionQuote, occ_symbol};

use super::listing::{self, Expiration, ExpirationFamily, StrikeStyle};
use super::rng::{SplitMix64, derive_seed};
use super::surface::Surface;
use super::universe::Underlying;

/// Everything one chain snapshot depends on.
#[derive(Debug, Clone, Copy)]
pub struct ChainSpec<'a> {
    /// The underlying.
    pub underlying: &'a Underlying,
    /// The trade date (New York) of the session.
    pub trade_date: NaiveDate,
    /// The instant of the snapshot; every quote's `quote_time`.
    pub instant: DateTime<Utc>,
    /// Underlying price (cash level for indices), dollars.
    pub spot: f64,
    /// The previous session's close, dollars: it anchors what does not move intraday, the
    /// listed strikes (exchanges list strikes around the prior close) and the open-interest
    /// and day-volume profiles. Not a positive finite number → `spot` is used.
    pub previous_close: f64,
    /// The underlying's implied-vol surface at `instant`.
    pub surface: &'a Surface,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// The simulator seed.
    pub seed: u64,
}

/// One simulated quote with the model values it was built from.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedQuote {
    /// The quote.
    pub quote: OptionQuote,
    /// The pricing inputs of the contract (spot or forward, strike, time, rate, yield).
    pub inputs: OptionInputs,
    /// The surface's implied vol at the contract's forward moneyness, decimal.
    pub model_iv: f64,
    /// The model value at `model_iv`, dollars per share.
    pub model_price: f64,
    /// The forward F of the expiration.
    pub forward: f64,
}

/// The chain snapshot as schema rows, ordered by expiration, strike, call before put.
pub fn chain_snapshot(spec: &ChainSpec<'_>, calendar: &NyseCalendar) -> Vec<OptionQuote> {
    simulate_chain(spec, calendar)
        .into_iter()
        .map(|q| q.quote)
        .collect()
}

/// The chain snapshot with each quote's model values (see the module documentation).
/// Expirations whose close is not after `instant` are left out; so is everything when `spot`
/// is not a positive finite number.
pub fn simulate_chain(spec: &ChainSpec<'_>, calendar: &NyseCalendar) -> Vec<SimulatedQuote> {
    let u = spec.underlying;
    if !(spec.spot.is_finite() && spec.spot > 0.0) {
        return Vec::new();
    }
    let anchor = if spec.previous_close.is_finite() && spec.previous_close > 0.0 {
        spec.previous_close
    } else {
        spec.spot
    };
    let oi_date = calendar.previous_trading_day(spec.trade_date);
    let progress = intraday_volume_fraction(spec, calendar);
    let symbol_seed = derive_seed(spec.seed, fnv1a(u.symbol.as_bytes()));
    let instant_micros = spec.instant.timestamp_micros() as u64;
    let mut out = Vec::new();
    for expiration in listing::expirations(u, spec.trade_date, calendar) {
        let years = years_to_expiry(spec.instant, expiration.date);
        if !(years > 0.0) {
            continue;
        }
        let forward = spec.spot * ((spec.rate - u.dividend_yield) * years).exp();
        let atm_sd = spec.surface.atm_iv(years) * years.sqrt();
        let days = (expiration.date - spec.trade_date).num_days().max(1) as f64;
        let listing_sd = u.base_iv * (days / 365.0).sqrt();
        let root = u.option_root(expiration.family);
        for strike in listing::strike_grid(u, anchor, spec.trade_date, &expiration) {
            for option_type in [OptionType::Call, OptionType::Put] {
                let inputs = if u.priced_on_forward {
                    OptionInputs {
                        option_type,
                        model: PricingModel::Black76,
                        underlying: forward,
                        strike,
                        years,
                        rate: spec.rate,
                        dividend_yield: 0.0,
                    }
                } else {
                    OptionInputs {
                        option_type,
                        model: PricingModel::BlackScholesMerton,
                        underlying: spec.spot,
                        strike,
                        years,
                        rate: spec.rate,
                        dividend_yield: u.dividend_yield,
                    }
                };
                let k = (strike / forward).ln();
                let model_iv = spec.surface.iv(k, years);
                let Ok(model_price) = price(&inputs, model_iv) else {
                    continue;
                };
                let Ok(option_symbol) =
                    occ_symbol(root, expiration.date, schema_type(option_type), strike)
                else {
                    continue;
                };
                let contract = Contract {
                    expiration: &expiration,
                    strike,
                    option_type,
                    live_m: k / atm_sd.max(1e-4),
                    static_m: (strike / anchor).ln() / listing_sd.max(1e-4),
                    days,
                };
                let contract_seed = derive_seed(symbol_seed, contract.key());
                let vega = vega_per_point(&inputs, forward, model_iv);
                let market = quote_market(u, model_price, vega, &contract, {
                    derive_seed(contract_seed, instant_micros)
                });
                let open_interest = open_interest(u, anchor, &contract, contract_seed, oi_date);
                let day_volume = day_volume(
                    open_interest,
                    &contract,
                    derive_seed(contract_seed, fnv1a(spec.trade_date.to_string().as_bytes())),
                );
                let volume = (day_volume as f64 * progress).floor() as u64;
                let last = (volume > 0).then(|| {
                    let tick = market.tick;
                    let rounded = round_to_tick(model_price, tick);
                    rounded.max(market.bid).max(tick).min(market.ask)
                });
                out.push(SimulatedQuote {
                    quote: OptionQuote {
                        underlying: u.symbol.clone(),
                        option_symbol,
                        expiration: expiration.date,
                        strike,
                        option_type: schema_type(option_type),
                        settlement: expiration.settlement,
                        exercise_style: u.exercise_style(),
                        bid: market.bid,
                        ask: market.ask,
                        bid_size: market.bid_size,
                        ask_size: market.ask_size,
                        last,
                        volume,
                        open_interest,
                        oi_date,
                        quote_time: spec.instant,
                        underlying_price: spec.spot,
                    },
                    inputs,
                    model_iv,
                    model_price,
                    forward,
                });
            }
        }
    }
    out
}

/// The minimum price increment of `underlying`'s options at a premium of `value` dollars.
pub fn tick_size(underlying: &Underlying, value: f64) -> f64 {
    let penny_everywhere = matches!(underlying.symbol.as_str(), "SPY" | "QQQ" | "IWM" | "DIA");
    match underlying.asset_class {
        AssetClass::Index if underlying.strike_style != StrikeStyle::Volatility => {
            if value < 3.0 {
                0.05
            } else {
                0.10
            }
        }
        _ if penny_everywhere => 0.01,
        _ => {
            if value < 3.0 {
                0.01
            } else {
                0.05
            }
        }
    }
}

/// The liquidity factor `L` of the quoted width (see the module documentation).
pub fn liquidity_factor(underlying: &Underlying) -> f64 {
    if underlying.synthetic {
        return 3.0;
    }
    match underlying.asset_class {
        AssetClass::Index => 1.0,
        AssetClass::Etf if underlying.sector.is_none() => 0.5,
        AssetClass::Etf => 1.5,
        AssetClass::Stock => {
            let cap = underlying.market_cap_usd_bn.unwrap_or(50.0);
            (2.0 * (500.0 / cap).powf(0.2)).clamp(1.5, 4.0)
        }
    }
}

struct Contract<'a> {
    expiration: &'a Expiration,
    strike: f64,
    option_type: OptionType,
    /// ln(K/F) / (σ_ATM √T) at the instant: drives quoted sizes.
    live_m: f64,
    /// ln(K / previous close) / (base_iv · √(days/365)): fixed for the session, drives open
    /// interest and the day's volume.
    static_m: f64,
    /// Calendar days from the trade date to expiration, at least 1.
    days: f64,
}

impl Contract<'_> {
    /// A stable 64-bit key of the contract (expiration, strike in tenths of a cent, type).
    fn key(&self) -> u64 {
        let days = optics_schemas::date_to_days(self.expiration.date) as i64 as u64;
        let strike = (self.strike * 1000.0).round() as u64;
        let kind = match self.option_type {
            OptionType::Call => 1,
            OptionType::Put => 2,
        };
        derive_seed(derive_seed(days, strike), kind)
    }

    fn out_of_the_money(&self) -> bool {
        match self.option_type {
            OptionType::Call => self.static_m > 0.0,
            OptionType::Put => self.static_m < 0.0,
        }
    }
}

struct Market {
    bid: f64,
    ask: f64,
    bid_size: u32,
    ask_size: u32,
    tick: f64,
}

fn quote_market(
    u: &Underlying,
    value: f64,
    vega_points: f64,
    contract: &Contract<'_>,
    seed: u64,
) -> Market {
    let mut rng = SplitMix64::new(seed);
    let raw_width = liquidity_factor(u) * (0.004 * value + 0.02 * vega_points);
    let small_tick = tick_size(u, 0.0);
    let half = 0.5 * raw_width.max(small_tick);
    let tick = tick_size(u, value + half);
    let width = raw_width.max(tick);
    let half = 0.5 * width;
    let tick_cents = (tick * 100.0).round() as i64;
    let bid_cents = (((value - half) * 100.0) / tick_cents as f64).floor() as i64 * tick_cents;
    let ask_cents = (((value + half) * 100.0) / tick_cents as f64).ceil() as i64 * tick_cents;
    let ask_cents = ask_cents.max(tick_cents);
    let no_bid = value < small_tick || bid_cents <= 0;
    let bid = if no_bid {
        0.0
    } else {
        bid_cents as f64 / 100.0
    };
    let ask = ask_cents as f64 / 100.0;
    let max_size = match u.asset_class {
        AssetClass::Index => 150.0,
        AssetClass::Etf => 500.0,
        AssetClass::Stock => 120.0,
    } * near_money_weight(contract.live_m);
    let mut size = || rng.log_uniform(1.0, max_size.max(2.0) + 1.0).floor() as u32;
    let bid_size = size();
    let ask_size = size();
    Market {
        bid,
        ask,
        bid_size: if no_bid { 0 } else { bid_size.max(1) },
        ask_size: ask_size.max(1),
        tick,
    }
}

/// Open interest at the close of `oi_date` (see the module documentation).
fn open_interest(
    u: &Underlying,
    anchor: f64,
    contract: &Contract<'_>,
    contract_seed: u64,
    oi_date: NaiveDate,
) -> u64 {
    let base = if u.synthetic {
        300.0
    } else {
        match u.asset_class {
            AssetClass::Index => 6_000.0,
            AssetClass::Etf if u.sector.is_none() => 8_000.0,
            AssetClass::Etf => 1_500.0,
            AssetClass::Stock => {
                let cap = u.market_cap_usd_bn.unwrap_or(50.0);
                (1_500.0 * (cap / 200.0).powf(0.35)).clamp(200.0, 8_000.0)
            }
        }
    };
    let side = if contract.out_of_the_money() {
        if contract.option_type == OptionType::Put {
            1.3
        } else {
            1.0
        }
    } else {
        0.5
    };
    let unit = 10f64.powf(anchor.log10().floor()) / 10.0;
    let round = if is_multiple(contract.strike, unit) {
        2.5
    } else if is_multiple(contract.strike, unit / 2.0) {
        1.5
    } else {
        1.0
    };
    let family = match contract.expiration.family {
        ExpirationFamily::Monthly | ExpirationFamily::Leaps => 2.0,
        ExpirationFamily::Quarterly => 1.2,
        ExpirationFamily::Weekly | ExpirationFamily::Daily => 0.6,
    };
    let mut persistent = SplitMix64::new(contract_seed);
    let contract_factor = (0.6 * normal(&mut persistent)).exp();
    let mut daily = SplitMix64::new(derive_seed(
        contract_seed,
        optics_schemas::date_to_days(oi_date) as i64 as u64,
    ));
    let day_factor = (0.1 * normal(&mut daily)).exp();
    let oi = base
        * near_money_weight(contract.static_m)
        * side
        * round
        * family
        * contract_factor
        * day_factor;
    oi.round().max(0.0) as u64
}

/// The session's total volume of a contract (see the module documentation).
fn day_volume(open_interest: u64, contract: &Contract<'_>, seed: u64) -> u64 {
    let mut rng = SplitMix64::new(seed);
    if rng.chance(0.004) {
        let scale = open_interest.max(100) as f64;
        return (scale * rng.uniform(3.0, 12.0)).round() as u64;
    }
    let turnover = rng.uniform(0.01, 0.25)
        * (0.3 + near_money_weight(contract.static_m))
        * (1.0 + 2.0 / contract.days)
        / 1.3;
    (open_interest as f64 * turnover.min(1.0)).round() as u64
}

/// A bell around the money in [0.05, 1.05] of standardised moneyness `m`.
fn near_money_weight(m: f64) -> f64 {
    let x = m / 1.5;
    0.05 + (-0.5 * x * x).exp()
}

/// The U-shaped cumulative fraction of the day's volume traded by `spec.instant`.
fn intraday_volume_fraction(spec: &ChainSpec<'_>, calendar: &NyseCalendar) -> f64 {
    let Some(session) = calendar.session(spec.trade_date) else {
        return 0.0;
    };
    let total = session.duration().num_microseconds().unwrap_or(1).max(1) as f64;
    let elapsed = spec
        .instant
        .signed_duration_since(session.open)
        .num_microseconds()
        .unwrap_or(0) as f64;
    let p = (elapsed / total).clamp(0.0, 1.0);
    let tau = std::f64::consts::TAU;
    (p + 0.3 * (tau * p).sin() / tau).clamp(0.0, 1.0)
}

/// Vega per vol point: D·F·n(d1)·√T / 100.
fn vega_per_point(inputs: &OptionInputs, forward: f64, vol: f64) -> f64 {
    let sd = vol * inputs.years.sqrt();
    if !(sd > 0.0) {
        return 0.0;
    }
    let d1 = (forward / inputs.strike).ln() / sd + 0.5 * sd;
    let density = (-0.5 * d1 * d1).exp() / (2.0 * std::f64::consts::PI).sqrt();
    inputs.discount() * forward * density * inputs.years.sqrt() / 100.0
}

fn round_to_tick(value: f64, tick: f64) -> f64 {
    let tick_cents = (tick * 100.0).round();
    ((value * 100.0 / tick_cents).round() * tick_cents) / 100.0
}

fn is_multiple(strike: f64, unit: f64) -> bool {
    if !(unit > 0.0) {
        return false;
    }
    let ratio = strike / unit;
    (ratio - ratio.round()).abs() < 1e-9
}

/// A standard normal draw (Box–Muller, one of the pair).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn schema_type(option_type: OptionType) -> optics_schemas::OptionType {
    match option_type {
        OptionType::Call => optics_schemas::OptionType::Call,
        OptionType::Put => optics_schemas::OptionType::Put,
    }
}

/// 64-bit FNV-1a of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    hash
}
