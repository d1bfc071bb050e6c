//! Static-arbitrage and skew checks over one chain: butterflies that cost less than nothing at
//! the quotes, calendars whose at-the-money total variance falls with maturity, put–call parity
//! broken by more than the quotes' spread, and out-of-the-money wings far from the ATM IV.
//!
//! Every arbitrage check uses executable prices — the ask of what is bought, the bid of what is
//! sold — so a row is an opportunity at the quotes, not a model's opinion; the mid figure is
//! given beside it. Prices in dollars per share, IVs in percentage points.

use chrono::NaiveDate;
use optics_schemas::{ChainRow, ChainSide, PricingModelCode, SettlementStyle};

use crate::pricing::OptionType;
use crate::vol::ExpirationVol;

/// Dollars per share an executable edge must exceed to count (a cent: below it, rounding).
pub const MIN_EDGE_DOLLARS: f64 = 0.01;
/// Put-wing skew (25-delta put IV − ATM IV) from which the put wing is rich, points.
pub const PUT_SKEW_RICH_POINTS: f64 = 6.0;
/// Put-wing skew at or below which the put wing is cheap (flat or inverted), points.
pub const PUT_SKEW_CHEAP_POINTS: f64 = 0.0;
/// Call-wing skew (25-delta call IV − ATM IV) from which the call wing is rich, points.
pub const CALL_SKEW_RICH_POINTS: f64 = 2.0;

/// A butterfly of three consecutive listed strikes that costs less than nothing at the quotes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ButterflyArb {
    /// Expiration.
    pub expiration: NaiveDate,
    /// Call or put butterfly.
    pub option_type: OptionType,
    /// The wings and the body, dollars.
    pub lower_strike: f64,
    /// The body.
    pub middle_strike: f64,
    /// The upper wing.
    pub upper_strike: f64,
    /// Weight of the lower wing, λ = (K₃ − K₂)/(K₃ − K₁); the upper's is 1 − λ.
    pub lower_weight: f64,
    /// λ·ask(K₁) + (1 − λ)·ask(K₃) − bid(K₂): what the butterfly costs to buy, dollars per share.
    pub butterfly_cost: f64,
    /// The same at the mids.
    pub mid_cost: f64,
    /// −butterfly_cost: collected for a payoff that is never negative, dollars per share.
    pub edge: f64,
    /// edge / bid(K₂) × 100, percent of the body's price.
    pub edge_pct: f64,
}

/// An expiration pair whose at-the-money total variance falls with maturity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalendarArb {
    /// The nearer expiration.
    pub near_expiration: NaiveDate,
    /// The farther one.
    pub far_expiration: NaiveDate,
    /// ATM IVs, points.
    pub near_atm_iv: f64,
    /// The farther ATM IV.
    pub far_atm_iv: f64,
    /// Years to each.
    pub near_years: f64,
    /// Years to the farther.
    pub far_years: f64,
    /// (σ₂²T₂ − σ₁²T₁)/(T₂ − T₁), annualised variance (decimal²): negative here.
    pub forward_variance: f64,
    /// √(σ₁²T₁/T₂) − σ₂, points: how far the farther IV is below the least that is not an
    /// arbitrage.
    pub edge_vol_points: f64,
}

/// A strike whose call − put breaks parity against the chain's forward by more than the spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParityViolation {
    /// Expiration.
    pub expiration: NaiveDate,
    /// Strike, dollars.
    pub strike: f64,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// e^{−rT}·(F − K): what call − put is worth, dollars per share.
    pub parity_value: f64,
    /// Call mid − put mid.
    pub mid_difference: f64,
    /// `buy_synthetic` (call ask − put bid below parity) or `sell_synthetic` (call bid − put
    /// ask above it).
    pub direction: &'static str,
    /// What the synthetic trades at on its executable side, dollars per share.
    pub executable: f64,
    /// The gap to parity beyond the spread, dollars per share.
    pub edge: f64,
    /// European options (priced on Black-76: cash indices): parity is an identity. For
    /// American-style options a `buy_synthetic` row can be early-exercise value, not arbitrage.
    pub european: bool,
}

/// An OTM wing whose IV is far from the ATM IV of its expiration.
#[derive(Debug, Clone, PartialEq)]
pub struct SkewTrade {
    /// Expiration.
    pub expiration: NaiveDate,
    /// `put` or `call` wing.
    pub wing: &'static str,
    /// ATM IV, points.
    pub atm_iv: f64,
    /// The 25-delta wing's IV, points.
    pub otm_iv: f64,
    /// otm_iv − atm_iv, points.
    pub skew: f64,
    /// The trade the skew suggests.
    pub strategy: &'static str,
}

/// Bid and ask of a side when both are quoted (bid > 0).
fn two_sided(side: &ChainSide) -> Option<(f64, f64)> {
    let (bid, ask) = (side.bid?, side.ask?);
    (bid > 0.0 && ask >= bid && ask.is_finite()).then_some((bid, ask))
}

/// The butterflies of `rows` (any order; one chain) over three consecutive two-sided strikes
/// of one expiration, settlement and type, that cost less than −[`MIN_EDGE_DOLLARS`] to buy.
/// While parity holds a call butterfly and the put butterfly of the same strikes are the same
/// position, so a strike triple is one opportunity: the cheaper of the two is kept.
pub fn butterfly_arbs(rows: &[ChainRow]) -> Vec<ButterflyArb> {
    let mut found: Vec<ButterflyArb> = Vec::new();
    for_each_expiration(rows, |expiration, rows| {
        let first = found.len();
        for option_type in [OptionType::Call, OptionType::Put] {
            let quoted: Vec<(f64, f64, f64)> = rows
                .iter()
                .filter_map(|r| {
                    let side = match option_type {
                        OptionType::Call => &r.call,
                        OptionType::Put => &r.put,
                    };
                    two_sided(side).map(|(bid, ask)| (r.strike, bid, ask))
                })
                .collect();
            for w in quoted.windows(3) {
                let [(k1, b1, a1), (k2, b2, a2), (k3, b3, a3)] = [w[0], w[1], w[2]];
                let lambda = (k3 - k2) / (k3 - k1);
                let cost = lambda * a1 + (1.0 - lambda) * a3 - b2;
                if cost < -MIN_EDGE_DOLLARS {
                    let mid = |b: f64, a: f64| 0.5 * (b + a);
                    found.push(ButterflyArb {
                        expiration,
                        option_type,
                        lower_strike: k1,
                        middle_strike: k2,
                        upper_strike: k3,
                        lower_weight: lambda,
                        butterfly_cost: cost,
                        mid_cost: lambda * mid(b1, a1) + (1.0 - lambda) * mid(b3, a3) - mid(b2, a2),
                        edge: -cost,
                        edge_pct: -cost / b2 * 100.0,
                    });
                }
            }
        }
        // One row per strike triple of this expiration: the larger edge.
        let mut of_expiration = found.split_off(first);
        of_expiration.sort_by(|a, b| {
            (a.lower_strike, a.middle_strike, a.upper_strike)
                .partial_cmp(&(b.lower_strike, b.middle_strike, b.upper_strike))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.edge.total_cmp(&a.edge))
        });
        of_expiration.dedup_by(|later, kept| {
            (later.lower_strike, later.middle_strike, later.upper_strike)
                == (kept.lower_strike, kept.middle_strike, kept.upper_strike)
        });
        found.extend(of_expiration);
    });
    found
}

/// Calls `visit` with each (expiration, settlement) group of `rows`, strikes ascending.
fn for_each_expiration(rows: &[ChainRow], mut visit: impl FnMut(NaiveDate, &[&ChainRow])) {
    let mut sorted: Vec<&ChainRow> = rows.iter().collect();
    sorted.sort_by(|a, b| {
        (a.expiration, settlement_rank(a.settlement))
            .cmp(&(b.expiration, settlement_rank(b.settlement)))
            .then(a.strike.total_cmp(&b.strike))
    });
    for group in
        sorted.chunk_by(|a, b| a.expiration == b.expiration && a.settlement == b.settlement)
    {
        visit(group[0].expiration, group);
    }
}

fn settlement_rank(s: SettlementStyle) -> u8 {
    match s {
        SettlementStyle::Am => 0,
        SettlementStyle::Pm => 1,
    }
}

/// The consecutive expirations of `vols` (one settlement style, nearest first, as
/// [`crate::vol::expiration_vols`] lists them) whose ATM total variance σ²T falls.
pub fn calendar_arbs(vols: &[ExpirationVol]) -> Vec<CalendarArb> {
    let usable: Vec<(&ExpirationVol, f64)> = vols
        .iter()
        .filter(|v| v.years_to_expiry > 0.0)
        .filter_map(|v| Some((v, v.atm_iv_pct.filter(|iv| iv.is_finite() && *iv > 0.0)?)))
        .collect();
    let mut found = Vec::new();
    for (i, (near, near_iv)) in usable.iter().enumerate() {
        // The next expiration of the same settlement style.
        let Some((far, far_iv)) = usable[i + 1..].iter().find(|(v, _)| {
            v.settlement == near.settlement && v.years_to_expiry > near.years_to_expiry
        }) else {
            continue;
        };
        let (t1, t2) = (near.years_to_expiry, far.years_to_expiry);
        let (w1, w2) = (
            (near_iv / 100.0).powi(2) * t1,
            (far_iv / 100.0).powi(2) * t2,
        );
        let forward_variance = (w2 - w1) / (t2 - t1);
        if forward_variance < 0.0 {
            found.push(CalendarArb {
                near_expiration: near.expiration,
                far_expiration: far.expiration,
                near_atm_iv: *near_iv,
                far_atm_iv: *far_iv,
                near_years: t1,
                far_years: t2,
                forward_variance,
                edge_vol_points: (w1 / t2).sqrt() * 100.0 - far_iv,
            });
        }
    }
    found
}

/// The strikes of `rows` whose executable synthetic (long call + short put, or the reverse)
/// trades beyond e^{−rT}(F − K) by more than [`MIN_EDGE_DOLLARS`], against each row's own
/// forward and rate.
pub fn parity_violations(rows: &[ChainRow]) -> Vec<ParityViolation> {
    let mut found = Vec::new();
    for r in rows {
        let (Some((call_bid, call_ask)), Some((put_bid, put_ask))) =
            (two_sided(&r.call), two_sided(&r.put))
        else {
            continue;
        };
        if !(r.forward.is_finite() && r.forward > 0.0 && r.years_to_expiry > 0.0) {
            continue;
        }
        let parity = (-r.rate * r.years_to_expiry).exp() * (r.forward - r.strike);
        let buy = call_ask - put_bid;
        let sell = call_bid - put_ask;
        let (direction, executable, edge) = if parity - buy > MIN_EDGE_DOLLARS {
            ("buy_synthetic", buy, parity - buy)
        } else if sell - parity > MIN_EDGE_DOLLARS {
            ("sell_synthetic", sell, sell - parity)
        } else {
            continue;
        };
        found.push(ParityViolation {
            expiration: r.expiration,
            strike: r.strike,
            forward: r.forward,
            parity_value: parity,
            mid_difference: 0.5 * (call_bid + call_ask) - 0.5 * (put_bid + put_ask),
            direction,
            executable,
            edge,
            european: r.model == PricingModelCode::Black76,
        });
    }
    found
}

/// The wings of `vols` beyond the skew thresholds, with the trade each suggests.
pub fn skew_trades(vols: &[ExpirationVol]) -> Vec<SkewTrade> {
    let mut found = Vec::new();
    for v in vols {
        let Some(atm) = v.atm_iv_pct else { continue };
        if let Some(put) = v.put25_iv_pct {
            let skew = put - atm;
            let strategy = if skew >= PUT_SKEW_RICH_POINTS {
                Some("put wing rich: sell the 25-delta put against the ATM put (put ratio spread)")
            } else if skew <= PUT_SKEW_CHEAP_POINTS {
                Some("put wing flat or inverted: buy the 25-delta put, financed by the ATM put")
            } else {
                None
            };
            if let Some(strategy) = strategy {
                found.push(SkewTrade {
                    expiration: v.expiration,
                    wing: "put",
                    atm_iv: atm,
                    otm_iv: put,
                    skew,
                    strategy,
                });
            }
        }
        if let Some(call) = v.call25_iv_pct {
            let skew = call - atm;
            if skew >= CALL_SKEW_RICH_POINTS {
                found.push(SkewTrade {
                    expiration: v.expiration,
                    wing: "call",
                    atm_iv: atm,
                    otm_iv: call,
                    skew,
                    strategy: "call wing rich: sell the 25-delta call against the ATM call \
                               (call ratio spread)",
                });
            }
        }
    }
    found
}

/// The skew rule, from its constants.
pub fn skew_rule() -> String {
    format!(
        "put wing (25-delta put IV - ATM IV) >= {PUT_SKEW_RICH_POINTS} points rich, <= \
         {PUT_SKEW_CHEAP_POINTS} cheap; call wing (25-delta call IV - ATM IV) >= \
         {CALL_SKEW_RICH_POINTS} points rich"
    )
}
