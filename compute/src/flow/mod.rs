//! Options flow: each contract's session volume and premium, the unusual-activity flag, and the
//! aggregates of `/flow`, `/volume-profile` and `/smart-money`.
//!
//! The flow aggregates today's cumulative volume per contract; it does not label individual
//! prints, so it cannot tell buying from selling. Every figure is a plain function of the chain's
//! [`ContractAnalytics`] and the spot.
//!
//! # Definitions
//!
//! | figure | definition |
//! | --- | --- |
//! | `premium` | volume × price × 100, dollars; price = the mid, or (bid + ask)/2 when the quote is one-sided with both fields present (a zero bid); `None` without a price |
//! | `volume_oi_ratio` | volume / open interest; `None` when open interest is 0 |
//! | `is_unusual` | volume ≥ [`FlowConfig::unusual_min_volume`] and (open interest is 0, or volume ≥ [`FlowConfig::unusual_volume_multiple`] × open interest) |
//! | `moneyness` | ITM when a call's strike is below spot or a put's above; OTM otherwise (at-the-money counts as OTM) |
//! | `call_put_ratio` | call volume / put volume (`None` when put volume is 0); `put_call_ratio` the inverse |
//! | `net_premium` | call premium − put premium, dollars (positive: more premium spent on calls) |
//! | `sentiment` | BULLISH when net premium > [`FlowConfig::sentiment_threshold`] × total premium, BEARISH when < −threshold × total, NEUTRAL otherwise (and with no premium) |
//! | `total_flow_count` | contracts with volume > 0 (the rows of `all_flow`) |
//! | strike / expiration flow | the [`FlowTotals`] of the rows of one strike (across expirations) or one expiration: call, put and total volume and premium, contracts; [`strike_flows`], [`expiration_flows`], ranked by [`top_flow_groups`] |
//!
//! Smart money ([`smart_money`]): three documented filters on the same rows — size
//! (premium ≥ [`SmartMoneyConfig::min_premium_usd`]), likely opening (volume >
//! [`SmartMoneyConfig::opening_volume_oi_ratio`] × open interest: more contracts traded than
//! were open, so some must be new) and out of the money with time (OTM and
//! dte ≥ [`SmartMoneyConfig::min_dte`]). A contract qualifies with the size filter and at least
//! one other; its score is 100 × (filters met)/3, rounded.

mod snapshot;
#[cfg(test)]
mod tests;

pub use snapshot::{
    flow_aggregate_rows, flow_aggregates_batch, flow_batch, flow_groups, flow_snapshot_rows,
};

use std::cmp::Ordering;
use std::collections::BTreeMap;

use chrono::NaiveDate;
use optics_schemas::{FlowTotals, StrikeKey};

use crate::exposure::{CONTRACT_MULTIPLIER, ContractAnalytics, ExposureError};
use crate::pricing::OptionType;

/// Bad input to the flow functions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FlowError {
    /// A contract field out of its domain.
    #[error(transparent)]
    Input(#[from] ExposureError),
    /// The spot is not a finite number > 0.
    #[error("invalid spot {0}: must be a finite number > 0")]
    Spot(f64),
    /// A configuration value out of its domain.
    #[error("invalid flow configuration: {field} {reason}")]
    Config {
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// Thresholds of the flow figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowConfig {
    /// Volume must be at least this multiple of open interest to be unusual.
    pub unusual_volume_multiple: f64,
    /// ... and at least this many contracts.
    pub unusual_min_volume: u64,
    /// Share of total premium the net premium must exceed for a BULLISH/BEARISH label.
    pub sentiment_threshold: f64,
}

impl Default for FlowConfig {
    /// 2× open interest and ≥ 100 contracts for unusual; 10 % of total premium for sentiment
    /// (calls above 55 % of premium read bullish, below 45 % bearish).
    fn default() -> Self {
        Self {
            unusual_volume_multiple: 2.0,
            unusual_min_volume: 100,
            sentiment_threshold: 0.10,
        }
    }
}

impl FlowConfig {
    fn validate(&self) -> Result<(), FlowError> {
        if !(self.unusual_volume_multiple.is_finite() && self.unusual_volume_multiple > 0.0) {
            return Err(FlowError::Config {
                field: "unusual_volume_multiple",
                reason: "must be a finite number > 0",
            });
        }
        if !(self.sentiment_threshold >= 0.0 && self.sentiment_threshold < 1.0) {
            return Err(FlowError::Config {
                field: "sentiment_threshold",
                reason: "must be in [0, 1)",
            });
        }
        Ok(())
    }
}

/// In or out of the money against spot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Moneyness {
    /// In the money.
    Itm,
    /// Out of (or at) the money.
    Otm,
}

impl Moneyness {
    /// `ITM` or `OTM`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Itm => "ITM",
            Self::Otm => "OTM",
        }
    }

    /// The moneyness of a contract against `spot`.
    pub fn of(option_type: OptionType, strike: f64, spot: f64) -> Self {
        let in_the_money = match option_type {
            OptionType::Call => strike < spot,
            OptionType::Put => strike > spot,
        };
        if in_the_money { Self::Itm } else { Self::Otm }
    }
}

/// One contract's session flow (a row of `all_flow`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowRow {
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Strike, dollars.
    pub strike: f64,
    /// Call or put.
    pub option_type: OptionType,
    /// Calendar days to expiration.
    pub dte: i64,
    /// Bid, dollars per share.
    pub bid: Option<f64>,
    /// Ask, dollars per share.
    pub ask: Option<f64>,
    /// Mid, dollars per share.
    pub mid: Option<f64>,
    /// Per-share delta from the chain.
    pub delta: Option<f64>,
    /// Contracts traded this session.
    pub volume: u64,
    /// Open interest, contracts.
    pub open_interest: u64,
    /// volume × price × 100, dollars.
    pub premium_usd: Option<f64>,
    /// volume / open interest; `None` when open interest is 0.
    pub volume_oi_ratio: Option<f64>,
    /// The unusual-activity flag.
    pub is_unusual: bool,
    /// Against spot.
    pub moneyness: Moneyness,
}

impl FlowRow {
    /// `premium_usd`, or 0 without a price (for sums and rankings).
    pub fn premium_or_zero(&self) -> f64 {
        self.premium_usd.unwrap_or(0.0)
    }

    fn key_order(&self, other: &Self) -> Ordering {
        self.expiration
            .cmp(&other.expiration)
            .then(self.strike.total_cmp(&other.strike))
            .then(
                (self.option_type == OptionType::Put).cmp(&(other.option_type == OptionType::Put)),
            )
    }
}

/// The price `premium` is counted at: the mid, else (bid + ask)/2 when both are present.
fn premium_price(contract: &ContractAnalytics) -> Option<f64> {
    contract.mid.or(match (contract.bid, contract.ask) {
        (Some(bid), Some(ask)) if ask >= bid => Some(optics_schemas::quote_mid(bid, ask)),
        _ => None,
    })
}

/// The flow rows of every contract that traded this session (volume > 0), sorted by
/// expiration, strike, call before put.
pub fn flow_rows(
    contracts: &[ContractAnalytics],
    spot: f64,
    config: &FlowConfig,
) -> Result<Vec<FlowRow>, FlowError> {
    check_market(spot, config)?;
    for (index, contract) in contracts.iter().enumerate() {
        contract.validate(index)?;
    }
    Ok(rows_of(contracts, spot, config))
}

/// The spot and configuration every flow derivation needs.
fn check_market(spot: f64, config: &FlowConfig) -> Result<(), FlowError> {
    if !(spot.is_finite() && spot > 0.0) {
        return Err(FlowError::Spot(spot));
    }
    config.validate()
}

/// [`flow_rows`] of contracts that [`crate::exposure::compute_exposures`] has just accepted
/// (the worker's cycle): the same rows, without validating every contract a second time.
pub fn flow_rows_of_accepted(
    contracts: &[ContractAnalytics],
    spot: f64,
    config: &FlowConfig,
) -> Result<Vec<FlowRow>, FlowError> {
    check_market(spot, config)?;
    debug_assert!(
        contracts
            .iter()
            .enumerate()
            .all(|(i, c)| c.validate(i).is_ok())
    );
    Ok(rows_of(contracts, spot, config))
}

fn rows_of(contracts: &[ContractAnalytics], spot: f64, config: &FlowConfig) -> Vec<FlowRow> {
    // Sized first: growing a vector of rows by doubling copied them over and over.
    let mut rows: Vec<FlowRow> =
        Vec::with_capacity(contracts.iter().filter(|c| c.volume > 0).count());
    rows.extend(contracts.iter().filter(|c| c.volume > 0).map(|c| {
        let volume = c.volume as f64;
        let open_interest = c.open_interest as f64;
        let is_unusual = c.volume >= config.unusual_min_volume
            && (c.open_interest == 0 || volume >= config.unusual_volume_multiple * open_interest);
        FlowRow {
            expiration: c.expiration,
            strike: c.strike,
            option_type: c.option_type,
            dte: c.dte,
            bid: c.bid,
            ask: c.ask,
            mid: c.mid,
            delta: c.greeks.map(|g| g.delta),
            volume: c.volume,
            open_interest: c.open_interest,
            premium_usd: premium_price(c).map(|p| volume * p * CONTRACT_MULTIPLIER),
            volume_oi_ratio: (c.open_interest > 0).then(|| volume / open_interest),
            is_unusual,
            moneyness: Moneyness::of(c.option_type, c.strike, spot),
        }
    }));
    // A chain build's contracts come in this order already (one settlement per date).
    if !rows.is_sorted_by(|a, b| a.key_order(b).is_le()) {
        rows.sort_by(FlowRow::key_order);
    }
    rows
}

/// BULLISH, BEARISH or NEUTRAL, from the premium balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sentiment {
    /// Net premium above the threshold share of total premium.
    Bullish,
    /// Net premium below minus the threshold share.
    Bearish,
    /// In between, or no premium.
    Neutral,
}

impl Sentiment {
    /// The API code.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Bullish => "BULLISH",
            Self::Bearish => "BEARISH",
            Self::Neutral => "NEUTRAL",
        }
    }
}

/// The `summary` block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowSummary {
    /// Σ call premium, dollars.
    pub total_call_premium: f64,
    /// Σ put premium, dollars.
    pub total_put_premium: f64,
    /// Σ call volume, contracts.
    pub total_call_volume: u64,
    /// Σ put volume, contracts.
    pub total_put_volume: u64,
    /// Rows (contracts that traded).
    pub total_flow_count: usize,
    /// Call volume / put volume.
    pub call_put_ratio: Option<f64>,
    /// Put volume / call volume.
    pub put_call_ratio: Option<f64>,
    /// Call premium − put premium, dollars.
    pub net_premium: f64,
    /// From the premium balance.
    pub sentiment: Sentiment,
}

/// Counts `row` into `totals` (the dataset's sums, [`FlowTotals`]): a premium without a
/// price counts 0, premiums are added in the order rows come.
fn add_to_totals(totals: &mut FlowTotals, row: &FlowRow) {
    let premium = row.premium_or_zero();
    match row.option_type {
        OptionType::Call => {
            totals.call_volume += row.volume;
            totals.call_premium_usd += premium;
        }
        OptionType::Put => {
            totals.put_volume += row.volume;
            totals.put_premium_usd += premium;
        }
    }
    totals.volume += row.volume;
    totals.premium_usd += premium;
    totals.contracts += 1;
}

/// The summary of `rows` (see the module table).
pub fn summarize_flow(rows: &[FlowRow], config: &FlowConfig) -> FlowSummary {
    let mut totals = FlowTotals::default();
    for row in rows {
        add_to_totals(&mut totals, row);
    }
    let FlowTotals {
        call_volume,
        put_volume,
        call_premium_usd: call_premium,
        put_premium_usd: put_premium,
        ..
    } = totals;
    let net_premium = call_premium - put_premium;
    let total_premium = call_premium + put_premium;
    let sentiment =
        if total_premium > 0.0 && net_premium > config.sentiment_threshold * total_premium {
            Sentiment::Bullish
        } else if total_premium > 0.0 && net_premium < -config.sentiment_threshold * total_premium {
            Sentiment::Bearish
        } else {
            Sentiment::Neutral
        };
    let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
    FlowSummary {
        total_call_premium: call_premium,
        total_put_premium: put_premium,
        total_call_volume: call_volume,
        total_put_volume: put_volume,
        total_flow_count: rows.len(),
        call_put_ratio: ratio(call_volume, put_volume),
        put_call_ratio: ratio(put_volume, call_volume),
        net_premium,
        sentiment,
    }
}

/// The `limit` rows with the most premium (then most volume), descending.
pub fn largest_flows(rows: &[FlowRow], limit: usize) -> Vec<FlowRow> {
    let mut sorted = rows.to_vec();
    sorted.sort_by(|a, b| {
        b.premium_or_zero()
            .total_cmp(&a.premium_or_zero())
            .then(b.volume.cmp(&a.volume))
            .then(a.key_order(b))
    });
    sorted.truncate(limit);
    sorted
}

/// The unusual rows, highest volume/OI first (open interest 0 ranks as infinite), then most
/// premium; at most `limit`.
pub fn unusual_activity(rows: &[FlowRow], limit: usize) -> Vec<FlowRow> {
    let mut unusual: Vec<FlowRow> = rows.iter().filter(|r| r.is_unusual).copied().collect();
    let rank = |r: &FlowRow| r.volume_oi_ratio.unwrap_or(f64::INFINITY);
    unusual.sort_by(|a, b| {
        rank(b)
            .total_cmp(&rank(a))
            .then(b.premium_or_zero().total_cmp(&a.premium_or_zero()))
            .then(a.key_order(b))
    });
    unusual.truncate(limit);
    unusual
}

/// The flow of one strike (across expirations) or of one expiration: its key and the totals
/// of its rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowGroup<K> {
    /// The strike (dollars) or the expiration.
    pub key: K,
    /// Sums over its rows.
    pub totals: FlowTotals,
}

/// Flow at one strike across expirations (`top_strikes`).
pub type StrikeFlow = FlowGroup<f64>;
/// Flow of one expiration (`top_expirations`).
pub type ExpirationFlow = FlowGroup<NaiveDate>;

/// A group key's ascending order: the last tie-break of [`top_flow_groups`].
pub trait GroupKey: Copy {
    /// Ascending order of two keys.
    fn key_order(&self, other: &Self) -> Ordering;
}

impl GroupKey for f64 {
    fn key_order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

impl GroupKey for NaiveDate {
    fn key_order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
}

/// The groups of `rows` by `group_of`, which gives the order to group by and the key reported
/// (the group's first row's); ascending by that order.
fn group_rows<O: Ord + Copy, K: Copy>(
    rows: &[FlowRow],
    group_of: impl Fn(&FlowRow) -> (O, K),
) -> Vec<FlowGroup<K>> {
    // Each row's group, then the rows in group order: a stable sort keeps each group's rows in
    // their given order, so every total is summed in row order. Rows already in group order
    // (expirations, from `flow_rows`) are not sorted.
    let mut order: Vec<(O, usize)> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| (group_of(row).0, i))
        .collect();
    if !order.is_sorted_by(|a, b| a.0 <= b.0) {
        order.sort_by_key(|(key, _)| *key);
    }
    let mut groups: Vec<FlowGroup<K>> = Vec::new();
    let mut current: Option<O> = None;
    for (key_order, i) in order {
        let row = &rows[i];
        if current != Some(key_order) {
            current = Some(key_order);
            groups.push(FlowGroup {
                key: group_of(row).1,
                totals: FlowTotals::default(),
            });
        }
        if let Some(group) = groups.last_mut() {
            add_to_totals(&mut group.totals, row);
        }
    }
    groups
}

/// The flow of every strike that traded, across expirations, ascending by strike.
pub fn strike_flows(rows: &[FlowRow]) -> Vec<StrikeFlow> {
    group_rows(rows, |r| (StrikeKey::from_dollars(r.strike), r.strike))
}

/// The flow of every expiration that traded, ascending.
pub fn expiration_flows(rows: &[FlowRow]) -> Vec<ExpirationFlow> {
    group_rows(rows, |r| (r.expiration, r.expiration))
}

/// Groups by premium, then volume, descending, then key ascending; at most `limit`
/// (`top_strikes` and `top_expirations` of `/flow`).
pub fn top_flow_groups<K: GroupKey>(
    mut groups: Vec<FlowGroup<K>>,
    limit: usize,
) -> Vec<FlowGroup<K>> {
    groups.sort_by(|a, b| {
        b.totals
            .premium_usd
            .total_cmp(&a.totals.premium_usd)
            .then(b.totals.volume.cmp(&a.totals.volume))
            .then(a.key.key_order(&b.key))
    });
    groups.truncate(limit);
    groups
}

/// One strike of the volume profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VolumeProfileRow {
    /// Strike, dollars.
    pub strike: f64,
    /// Call volume, contracts.
    pub call_volume: u64,
    /// Put volume, contracts.
    pub put_volume: u64,
    /// Call open interest, contracts.
    pub call_oi: u64,
    /// Put open interest, contracts.
    pub put_oi: u64,
}

/// Call and put volume and open interest by strike for one expiration (`/volume-profile`).
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeProfile {
    /// The expiration.
    pub expiration: NaiveDate,
    /// Every listed strike of it, ascending.
    pub rows: Vec<VolumeProfileRow>,
    /// The strikes with the most total volume, descending (ties: lower strike first).
    pub top_volume_strikes: Vec<f64>,
    /// The strikes with the most total open interest, descending.
    pub top_oi_strikes: Vec<f64>,
    /// Σ call volume.
    pub total_call_volume: u64,
    /// Σ put volume.
    pub total_put_volume: u64,
    /// Put volume / call volume; `None` when call volume is 0.
    pub put_call_ratio: Option<f64>,
}

/// The volume profile of `expiration` over `contracts` (other expirations are ignored), with
/// the `top` leading strikes by volume and by open interest.
pub fn volume_profile(
    contracts: &[ContractAnalytics],
    expiration: NaiveDate,
    top: usize,
) -> VolumeProfile {
    let mut by_strike: BTreeMap<StrikeKey, VolumeProfileRow> = BTreeMap::new();
    for c in contracts.iter().filter(|c| c.expiration == expiration) {
        let row = by_strike
            .entry(StrikeKey::from_dollars(c.strike))
            .or_insert(VolumeProfileRow {
                strike: c.strike,
                call_volume: 0,
                put_volume: 0,
                call_oi: 0,
                put_oi: 0,
            });
        match c.option_type {
            OptionType::Call => {
                row.call_volume += c.volume;
                row.call_oi += c.open_interest;
            }
            OptionType::Put => {
                row.put_volume += c.volume;
                row.put_oi += c.open_interest;
            }
        }
    }
    let rows: Vec<VolumeProfileRow> = by_strike.into_values().collect();
    let leaders = |measure: fn(&VolumeProfileRow) -> u64| {
        let mut ranked: Vec<&VolumeProfileRow> = rows.iter().filter(|r| measure(r) > 0).collect();
        // Stable sort on ascending strikes: ties keep the lower strike first.
        ranked.sort_by_key(|r| std::cmp::Reverse(measure(r)));
        ranked.iter().take(top).map(|r| r.strike).collect()
    };
    let total_call_volume = rows.iter().map(|r| r.call_volume).sum();
    let total_put_volume: u64 = rows.iter().map(|r| r.put_volume).sum();
    VolumeProfile {
        expiration,
        top_volume_strikes: leaders(|r| r.call_volume + r.put_volume),
        top_oi_strikes: leaders(|r| r.call_oi + r.put_oi),
        put_call_ratio: (total_call_volume > 0)
            .then(|| total_put_volume as f64 / total_call_volume as f64),
        total_call_volume,
        total_put_volume,
        rows,
    }
}

/// The filters of [`smart_money`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmartMoneyConfig {
    /// Size: premium at least this many dollars.
    pub min_premium_usd: f64,
    /// Likely opening: volume above this multiple of open interest.
    pub opening_volume_oi_ratio: f64,
    /// With time: at least this many calendar days to expiration (and out of the money).
    pub min_dte: i64,
}

impl Default for SmartMoneyConfig {
    /// $100,000 of premium; volume above open interest; OTM with at least 7 days left.
    fn default() -> Self {
        Self {
            min_premium_usd: 100_000.0,
            opening_volume_oi_ratio: 1.0,
            min_dte: 7,
        }
    }
}

/// Which smart-money filter a contract met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmartMoneyCriterion {
    /// Premium ≥ the size threshold.
    LargePremium,
    /// Volume > the opening multiple × open interest.
    LikelyOpening,
    /// Out of the money with at least `min_dte` days left.
    OutOfTheMoneyWithTime,
}

impl SmartMoneyCriterion {
    /// The API code.
    pub const fn code(self) -> &'static str {
        match self {
            Self::LargePremium => "large_premium",
            Self::LikelyOpening => "likely_opening",
            Self::OutOfTheMoneyWithTime => "otm_with_time",
        }
    }
}

/// A contract that passed the smart-money filters.
#[derive(Debug, Clone, PartialEq)]
pub struct SmartMoneyTrade {
    /// The flow row.
    pub row: FlowRow,
    /// The filters it met, in [`SmartMoneyCriterion`] order.
    pub criteria: Vec<SmartMoneyCriterion>,
    /// 100 × filters met / 3, rounded (67 or 100).
    pub score: u8,
}

/// The rows that pass the size filter and at least one other, by score then premium,
/// descending.
pub fn smart_money(rows: &[FlowRow], config: &SmartMoneyConfig) -> Vec<SmartMoneyTrade> {
    let mut trades: Vec<SmartMoneyTrade> = rows
        .iter()
        .filter_map(|row| {
            let large = row.premium_usd.is_some_and(|p| p >= config.min_premium_usd);
            let opening =
                row.volume as f64 > config.opening_volume_oi_ratio * row.open_interest as f64;
            let with_time = row.moneyness == Moneyness::Otm && row.dte >= config.min_dte;
            let criteria: Vec<SmartMoneyCriterion> = [
                (large, SmartMoneyCriterion::LargePremium),
                (opening, SmartMoneyCriterion::LikelyOpening),
                (with_time, SmartMoneyCriterion::OutOfTheMoneyWithTime),
            ]
            .into_iter()
            .filter_map(|(met, c)| met.then_some(c))
            .collect();
            (large && criteria.len() >= 2).then(|| SmartMoneyTrade {
                row: *row,
                score: ((100 * criteria.len() as u32 + 1) / 3) as u8,
                criteria,
            })
        })
        .collect();
    trades.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(b.row.premium_or_zero().total_cmp(&a.row.premium_or_zero()))
            .then(a.row.key_order(&b.row))
    });
    trades
}
