//! Levels read off the per-strike exposure profile: walls, key strikes, greek levels, key
//! levels, the strike-profile flips, max pain, `gex_ratio` and the implications rules.
//!
//! Definitions (every "largest" picks the lowest strike on a tie; a level is `None` when the
//! profile it is read from is zero everywhere). `distance_pct` is `(level − spot)/spot × 100`,
//! percent, signed (positive above spot).
//!
//! | level | definition |
//! | --- | --- |
//! | call wall | strike of the largest call GEX |
//! | put wall | strike of the largest \|put GEX\| |
//! | key gamma strike | strike of the largest \|net GEX\| |
//! | max / min gamma strike | strike of the most positive / most negative net GEX |
//! | greek key strike | strike of the largest \|net exposure\| of that Greek |
//! | greek max call / max put | strike of the largest \|call\| / \|put\| exposure of that Greek |
//! | greek ratio | \|call total\| / \|put total\| of that Greek (`None` when the put total is 0) |
//! | greek flip level | where the cumulative net exposure by strike (summed from the lowest strike up) changes sign, linearly interpolated between the two strikes; the crossing nearest spot |
//! | `gamma_flip` | the greek flip level of gamma: the static, strike-profile counterpart of the re-priced [`flip`](super::flip) level |
//! | charm pressure | strike of the largest \|net charm exposure\| |
//! | vanna resistance | strike at or above spot with the largest \|net vanna exposure\| |
//! | vanna support | strike below spot with the largest \|net vanna exposure\| |
//! | vol trigger | the listed strike nearest the re-priced flip level (where hedging flips from dampening to amplifying moves) |
//! | `gex_ratio` | call GEX / \|put GEX\| (> 1: call gamma dominates; `None` when put GEX is 0) |
//! | max pain | the listed strike minimising the total intrinsic value paid to holders at expiration, over open interest ([`max_pain`]) |
//!
//! Implications are rules over computed values, no fitted numbers ([`Implications`]).

use super::report::StrikeExposure;
use super::{CONTRACT_MULTIPLIER, ExposureKind, ExposureVector};

/// `(level − spot)/spot × 100`, percent.
pub fn distance_pct(level: f64, spot: f64) -> f64 {
    (level - spot) / spot * 100.0
}

/// A strike and the exposure there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrikeLevel {
    /// Strike, dollars.
    pub strike: f64,
    /// The exposure at the strike (unit of its [`ExposureKind`]), dealer-signed.
    pub exposure: f64,
    /// Distance from spot, percent.
    pub distance_pct: f64,
}

/// A price level (not necessarily a listed strike).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceLevel {
    /// Price, dollars.
    pub price: f64,
    /// Distance from spot, percent.
    pub distance_pct: f64,
}

impl PriceLevel {
    fn new(price: f64, spot: f64) -> Self {
        Self {
            price,
            distance_pct: distance_pct(price, spot),
        }
    }
}

/// The strike whose `value` is largest; `None` when every value is 0 (or there are no strikes).
/// `exposure` is `signed` at that strike.
fn strike_of_max(
    strikes: &[StrikeExposure],
    spot: f64,
    value: impl Fn(&StrikeExposure) -> f64,
    signed: impl Fn(&StrikeExposure) -> f64,
) -> Option<StrikeLevel> {
    let mut best = None;
    for (index, row) in strikes.iter().enumerate() {
        consider_for_max(&mut best, index, value(row));
    }
    strike_level(strikes, best, spot, signed)
}

/// One step of [`strike_of_max`]: `best` becomes `(index, value)` when `value` is non-zero and
/// larger than the best so far (the first of equal values stays).
#[inline]
fn consider_for_max(best: &mut Option<(usize, f64)>, index: usize, value: f64) {
    if value != 0.0 && best.is_none_or(|(_, b)| value > b) {
        *best = Some((index, value));
    }
}

/// The level of the strike at `best`'s index, its exposure `signed`.
fn strike_level(
    strikes: &[StrikeExposure],
    best: Option<(usize, f64)>,
    spot: f64,
    signed: impl Fn(&StrikeExposure) -> f64,
) -> Option<StrikeLevel> {
    best.map(|(index, _)| {
        let row = &strikes[index];
        StrikeLevel {
            strike: row.strike,
            exposure: signed(row),
            distance_pct: distance_pct(row.strike, spot),
        }
    })
}

/// The strike whose `signed` value is most positive (`most_positive`) or most negative; `None`
/// when every value is 0.
fn strike_of_extreme(
    strikes: &[StrikeExposure],
    spot: f64,
    signed: impl Fn(&StrikeExposure) -> f64,
    most_positive: bool,
) -> Option<StrikeLevel> {
    if strikes.iter().all(|r| signed(r) == 0.0) {
        return None;
    }
    let mut best: Option<(&StrikeExposure, f64)> = None;
    for row in strikes {
        let v = signed(row);
        let better = |b: f64| if most_positive { v > b } else { v < b };
        if best.is_none_or(|(_, b)| better(b)) {
            best = Some((row, v));
        }
    }
    best.map(|(row, v)| StrikeLevel {
        strike: row.strike,
        exposure: v,
        distance_pct: distance_pct(row.strike, spot),
    })
}

/// Call wall, put wall, key gamma strike and the max/min gamma strikes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GammaLevels {
    /// Largest call GEX.
    pub call_wall: Option<StrikeLevel>,
    /// Largest |put GEX| (`exposure` is the negative put GEX).
    pub put_wall: Option<StrikeLevel>,
    /// Largest |net GEX|.
    pub key_gamma_strike: Option<StrikeLevel>,
    /// Most positive net GEX.
    pub max_gamma_strike: Option<StrikeLevel>,
    /// Most negative net GEX.
    pub min_gamma_strike: Option<StrikeLevel>,
}

impl GammaLevels {
    /// The levels of a strike profile (ascending strikes).
    pub fn from_profile(strikes: &[StrikeExposure], spot: f64) -> Self {
        let g = ExposureKind::Gamma;
        Self {
            call_wall: strike_of_max(strikes, spot, |r| r.call[g], |r| r.call[g]),
            put_wall: strike_of_max(strikes, spot, |r| r.put[g].abs(), |r| r.put[g]),
            key_gamma_strike: strike_of_max(strikes, spot, |r| r.net_of(g).abs(), |r| r.net_of(g)),
            max_gamma_strike: strike_of_extreme(strikes, spot, |r| r.net_of(g), true),
            min_gamma_strike: strike_of_extreme(strikes, spot, |r| r.net_of(g), false),
        }
    }
}

/// Where the cumulative profile `cumulative` (aligned with `strikes`) changes sign, linearly
/// interpolated between strikes; the crossing nearest spot (lower on a tie).
pub fn cumulative_crossing(strikes: &[f64], cumulative: &[f64], spot: f64) -> Option<f64> {
    let mut search = CrossingSearch::default();
    for (&k, &c) in strikes.iter().zip(cumulative) {
        search.add(k, c, spot);
    }
    search.nearest
}

/// Running sum of the net exposures of `strikes` from the lowest strike up (aligned with
/// `strikes`): the profile [`GreekLevels::from_profile`] reads its crossings from.
pub fn cumulative_net(strikes: &[StrikeExposure]) -> Vec<ExposureVector> {
    let mut running = ExposureVector::ZERO;
    strikes
        .iter()
        .map(|row| {
            running += row.net();
            running
        })
        .collect()
}

/// [`cumulative_crossing`] of the running sum of `value` over `strikes` (ascending), without
/// writing the cumulative profile down.
pub fn running_sum_crossing(
    strikes: &[StrikeExposure],
    value: impl Fn(&StrikeExposure) -> f64,
    spot: f64,
) -> Option<f64> {
    let mut search = CrossingSearch::default();
    let mut running = 0.0;
    for row in strikes {
        running += value(row);
        search.add(row.strike, running, spot);
    }
    search.nearest
}

/// [`cumulative_crossing`] one strike at a time.
#[derive(Debug, Clone, Copy, Default)]
struct CrossingSearch {
    /// The last strike with a non-zero cumulative value, and that value.
    last: Option<(f64, f64)>,
    /// The crossing nearest spot so far.
    nearest: Option<f64>,
}

impl CrossingSearch {
    /// The next strike `k` (ascending) with cumulative value `c`.
    #[inline]
    fn add(&mut self, k: f64, c: f64, spot: f64) {
        if c == 0.0 {
            return;
        }
        if let Some((k0, c0)) = self.last
            && (c0 > 0.0) != (c > 0.0)
        {
            let x = k0 + (k - k0) * c0 / (c0 - c);
            if self
                .nearest
                .is_none_or(|b| (x - spot).abs() < (b - spot).abs())
            {
                self.nearest = Some(x);
            }
        }
        self.last = Some((k, c));
    }
}

/// The levels of one Greek (`greek_levels.<greek>`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GreekLevels {
    /// Which Greek.
    pub kind: ExposureKind,
    /// Largest |net exposure|.
    pub key_strike: Option<StrikeLevel>,
    /// Largest |call exposure|.
    pub max_call: Option<StrikeLevel>,
    /// Largest |put exposure|.
    pub max_put: Option<StrikeLevel>,
    /// |call total| / |put total|; `None` when the put total is 0.
    pub ratio: Option<f64>,
    /// Where the cumulative net exposure by strike changes sign (nearest spot).
    pub flip_level: Option<PriceLevel>,
}

impl GreekLevels {
    /// The levels of `kind` over a strike profile and its cumulative net exposure.
    pub fn from_profile(
        kind: ExposureKind,
        strikes: &[StrikeExposure],
        cumulative_net: &[ExposureVector],
        call_total: f64,
        put_total: f64,
        spot: f64,
    ) -> Self {
        let strike_values: Vec<f64> = strikes.iter().map(|r| r.strike).collect();
        let cumulative: Vec<f64> = cumulative_net.iter().map(|v| v[kind]).collect();
        Self {
            kind,
            key_strike: strike_of_max(strikes, spot, |r| r.net_of(kind).abs(), |r| r.net_of(kind)),
            max_call: strike_of_max(strikes, spot, |r| r.call[kind].abs(), |r| r.call[kind]),
            max_put: strike_of_max(strikes, spot, |r| r.put[kind].abs(), |r| r.put[kind]),
            ratio: ratio(call_total, put_total),
            flip_level: cumulative_crossing(&strike_values, &cumulative, spot)
                .map(|x| PriceLevel::new(x, spot)),
        }
    }
}

fn ratio(call_total: f64, put_total: f64) -> Option<f64> {
    (put_total != 0.0).then(|| call_total.abs() / put_total.abs())
}

/// `gex_ratio`: call GEX / |put GEX|; `None` when put GEX is 0.
pub fn gex_ratio(call_gex: f64, put_gex: f64) -> Option<f64> {
    ratio(call_gex, put_gex)
}

/// The named levels of `key_levels`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KeyLevels {
    /// Largest call GEX.
    pub call_wall: Option<StrikeLevel>,
    /// Largest |put GEX|.
    pub put_wall: Option<StrikeLevel>,
    /// Largest |net GEX|.
    pub key_gamma_strike: Option<StrikeLevel>,
    /// Largest |net charm exposure| (delta shares per day).
    pub charm_pressure: Option<StrikeLevel>,
    /// At or above spot: largest |net vanna exposure| (delta shares per vol point).
    pub vanna_resistance: Option<StrikeLevel>,
    /// Below spot: largest |net vanna exposure|.
    pub vanna_support: Option<StrikeLevel>,
    /// The listed strike nearest the re-priced flip level.
    pub vol_trigger: Option<PriceLevel>,
}

impl KeyLevels {
    /// The key levels of a strike profile, its gamma levels and re-priced flip level.
    pub fn from_profile(
        strikes: &[StrikeExposure],
        gamma: &GammaLevels,
        flip_level: Option<f64>,
        spot: f64,
    ) -> Self {
        let net = |kind: ExposureKind| move |r: &StrikeExposure| r.net_of(kind);
        let abs_net = |kind: ExposureKind| move |r: &StrikeExposure| r.net_of(kind).abs();
        let split = strikes.partition_point(|r| r.strike < spot);
        let (below, above) = strikes.split_at(split);
        let vol_trigger = flip_level.and_then(|flip| {
            strikes
                .iter()
                .map(|r| r.strike)
                .fold(None, |best: Option<f64>, k| match best {
                    Some(b) if (b - flip).abs() <= (k - flip).abs() => Some(b),
                    _ => Some(k),
                })
                .map(|k| PriceLevel::new(k, spot))
        });
        Self {
            call_wall: gamma.call_wall,
            put_wall: gamma.put_wall,
            key_gamma_strike: gamma.key_gamma_strike,
            charm_pressure: strike_of_max(
                strikes,
                spot,
                abs_net(ExposureKind::Charm),
                net(ExposureKind::Charm),
            ),
            vanna_resistance: strike_of_max(
                above,
                spot,
                abs_net(ExposureKind::Vanna),
                net(ExposureKind::Vanna),
            ),
            vanna_support: strike_of_max(
                below,
                spot,
                abs_net(ExposureKind::Vanna),
                net(ExposureKind::Vanna),
            ),
            vol_trigger,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Max pain.

/// Open interest of both sides at one strike (the input of [`max_pain`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenInterestAtStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// Call open interest, contracts.
    pub call: u64,
    /// Put open interest, contracts.
    pub put: u64,
}

/// What option holders would be paid if the underlying settled at one strike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrikePain {
    /// Candidate settlement price (a listed strike), dollars.
    pub strike: f64,
    /// Σ call OI × max(P − K, 0) × 100, dollars.
    pub call_pain_usd: f64,
    /// Σ put OI × max(K − P, 0) × 100, dollars.
    pub put_pain_usd: f64,
    /// The sum of both, dollars.
    pub total_pain_usd: f64,
}

/// The max-pain strike and the pain curve.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxPain {
    /// The strike with the least total pain (lowest on a tie), dollars.
    pub strike: f64,
    /// Total pain there, dollars.
    pub total_pain_usd: f64,
    /// `strike − spot`, dollars.
    pub distance_from_spot: f64,
    /// Distance from spot, percent.
    pub distance_pct: f64,
    /// Pain at every listed strike, ascending strikes.
    pub pain_by_strike: Vec<StrikePain>,
}

/// Max pain: the listed strike P minimising the intrinsic value option holders would receive at
/// settlement P, `100 × [Σ_calls OI·max(P − K, 0) + Σ_puts OI·max(K − P, 0)]`, evaluated exactly
/// at every listed strike (the pain is piecewise linear in P with kinks only at strikes, so its
/// minimum over all prices is at a strike). `None` without strikes or without open interest.
///
/// Linear time after sorting: each side's pain is accumulated strike to strike from its
/// zero end (`pain(K_{j+1}) = pain(K_j) + OI_{≤j}·(K_{j+1} − K_j)` for calls), adding only
/// non-negative terms, so there is no cancellation.
pub fn max_pain(open_interest: &[OpenInterestAtStrike], spot: f64) -> Option<MaxPain> {
    let mut rows: Vec<OpenInterestAtStrike> = Vec::with_capacity(open_interest.len());
    rows.extend(
        open_interest
            .iter()
            .copied()
            .filter(|r| r.strike.is_finite()),
    );
    rows.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    if rows.is_empty() || rows.iter().all(|r| r.call == 0 && r.put == 0) {
        return None;
    }
    let n = rows.len();
    let mut call_pain = vec![0.0; n];
    let mut calls_below = 0.0;
    for j in 1..n {
        calls_below += rows[j - 1].call as f64;
        call_pain[j] = call_pain[j - 1] + calls_below * (rows[j].strike - rows[j - 1].strike);
    }
    let mut put_pain = vec![0.0; n];
    let mut puts_above = 0.0;
    for j in (0..n - 1).rev() {
        puts_above += rows[j + 1].put as f64;
        put_pain[j] = put_pain[j + 1] + puts_above * (rows[j + 1].strike - rows[j].strike);
    }
    let pain_by_strike: Vec<StrikePain> = rows
        .iter()
        .zip(call_pain.iter().zip(&put_pain))
        .map(|(r, (&c, &p))| StrikePain {
            strike: r.strike,
            call_pain_usd: c * CONTRACT_MULTIPLIER,
            put_pain_usd: p * CONTRACT_MULTIPLIER,
            total_pain_usd: (c + p) * CONTRACT_MULTIPLIER,
        })
        .collect();
    let mut best = pain_by_strike[0];
    for p in &pain_by_strike[1..] {
        if p.total_pain_usd < best.total_pain_usd {
            best = *p;
        }
    }
    Some(MaxPain {
        strike: best.strike,
        total_pain_usd: best.total_pain_usd,
        distance_from_spot: best.strike - spot,
        distance_pct: distance_pct(best.strike, spot),
        pain_by_strike,
    })
}

/// Max pain's pull reads `STRONG` within this distance of spot, percent.
pub const MAGNET_STRONG_WITHIN_PCT: f64 = 1.0;
/// … and `MODERATE` within this one; `WEAK` beyond.
pub const MAGNET_MODERATE_WITHIN_PCT: f64 = 3.0;

/// How strongly max pain `distance_pct` percent from spot may pull the price (see
/// [`magnet_rule`]).
pub fn magnet_strength(distance_pct: f64) -> &'static str {
    match distance_pct.abs() {
        d if d <= MAGNET_STRONG_WITHIN_PCT => "STRONG",
        d if d <= MAGNET_MODERATE_WITHIN_PCT => "MODERATE",
        _ => "WEAK",
    }
}

/// The rule [`magnet_strength`] applies, for the payload.
pub fn magnet_rule() -> String {
    format!(
        "STRONG within {MAGNET_STRONG_WITHIN_PCT}% of spot, MODERATE within \
         {MAGNET_MODERATE_WITHIN_PCT}%, WEAK beyond; a pull toward max pain into expiration is a \
         tendency, not a forecast"
    )
}

// ---------------------------------------------------------------------------------------------
// Implications.

/// What dealer hedging does to moves, from the sign of net GEX at spot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolatilityRegime {
    /// Net GEX > 0: dealers are long gamma and hedge against moves (sell rallies, buy dips).
    Suppressed,
    /// Net GEX < 0: dealers are short gamma and hedge with moves (buy rallies, sell dips).
    Amplified,
    /// Net GEX exactly 0 (no exposure).
    Neutral,
}

impl VolatilityRegime {
    /// The API code.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Suppressed => "SUPPRESSED",
            Self::Amplified => "AMPLIFIED",
            Self::Neutral => "NEUTRAL",
        }
    }
}

/// Which side's gamma dominates, from `gex_ratio`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Positioning {
    /// `gex_ratio` > 1 + band (or put GEX is 0 and call GEX is not).
    CallDominated,
    /// `gex_ratio` < 1/(1 + band).
    PutDominated,
    /// Within the band, or no gamma at all.
    Balanced,
}

impl Positioning {
    /// The API code.
    pub const fn code(self) -> &'static str {
        match self {
            Self::CallDominated => "CALL_DOMINATED",
            Self::PutDominated => "PUT_DOMINATED",
            Self::Balanced => "BALANCED",
        }
    }
}

/// The direction hedging flows lean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectionalBias {
    /// Suppressed regime and call-dominated gamma.
    Bullish,
    /// Amplified regime and put-dominated gamma.
    Bearish,
    /// Any other combination.
    Neutral,
}

impl DirectionalBias {
    /// The API code.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Bullish => "BULLISH",
            Self::Bearish => "BEARISH",
            Self::Neutral => "NEUTRAL",
        }
    }
}

/// Parameters of the implications rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImplicationsConfig {
    /// Relative band around a `gex_ratio` of 1 read as balanced: 0.10 means ratios in
    /// [1/1.1, 1.1] are [`Positioning::Balanced`].
    pub balance_band: f64,
}

impl Default for ImplicationsConfig {
    fn default() -> Self {
        Self { balance_band: 0.10 }
    }
}

/// The regime in words (`implications`).
///
/// Rules: `volatility_regime` is the sign of net GEX at spot; `positioning` compares
/// `gex_ratio` with 1 ± the band; `directional_bias` is BULLISH when the regime is suppressed
/// and positioning call-dominated (dips are bought by hedgers and call gamma sits overhead),
/// BEARISH when the regime is amplified and positioning put-dominated (hedgers sell into
/// declines), NEUTRAL otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Implications {
    /// From the sign of net GEX.
    pub volatility_regime: VolatilityRegime,
    /// From `gex_ratio`.
    pub positioning: Positioning,
    /// From the two above.
    pub directional_bias: DirectionalBias,
}

impl Implications {
    /// Applies the rules to call and put GEX (dollars per 1 % move, put dealer-signed).
    pub fn from_gex(call_gex: f64, put_gex: f64, config: &ImplicationsConfig) -> Self {
        let net = call_gex + put_gex;
        let volatility_regime = if net > 0.0 {
            VolatilityRegime::Suppressed
        } else if net < 0.0 {
            VolatilityRegime::Amplified
        } else {
            VolatilityRegime::Neutral
        };
        let upper = 1.0 + config.balance_band;
        let positioning = match gex_ratio(call_gex, put_gex) {
            Some(r) if r > upper => Positioning::CallDominated,
            Some(r) if r < 1.0 / upper => Positioning::PutDominated,
            Some(_) => Positioning::Balanced,
            None if call_gex != 0.0 => Positioning::CallDominated,
            None => Positioning::Balanced,
        };
        let directional_bias = match (volatility_regime, positioning) {
            (VolatilityRegime::Suppressed, Positioning::CallDominated) => DirectionalBias::Bullish,
            (VolatilityRegime::Amplified, Positioning::PutDominated) => DirectionalBias::Bearish,
            _ => DirectionalBias::Neutral,
        };
        Self {
            volatility_regime,
            positioning,
            directional_bias,
        }
    }
}
