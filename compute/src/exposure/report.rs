//! Per-contract exposures and their aggregation by strike, by expiration and over everything.

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::StrikeKey;

use super::flip::{CurveContract, CurveTerms, FlipConfig, FlipLevel, GammaCurve};
use super::input::{ContractAnalytics, UnderlyingContext};
use super::levels::{
    GammaLevels, GreekLevels, Implications, ImplicationsConfig, KeyLevels, MaxPain,
    OpenInterestAtStrike, cumulative_net, gex_ratio, max_pain, running_sum_crossing,
};
use super::{CONTRACT_MULTIPLIER, ExposureError, ExposureKind, ExposureVector, ONE_PERCENT};
use crate::pricing::{Greeks, OptionType, PricingModel, greeks};
use crate::run_cache::RunCache;

/// Settings of [`compute_exposures`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ExposureConfig {
    /// Flip-level grid and tolerance.
    pub flip: FlipConfig,
    /// Implications rules.
    pub implications: ImplicationsConfig,
}

/// One contract's dealer exposures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContractExposure {
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Strike, dollars.
    pub strike: f64,
    /// Call or put.
    pub option_type: OptionType,
    /// Open interest, contracts.
    pub open_interest: u64,
    /// Calendar days to expiration.
    pub dte: i64,
    /// Implied volatility, decimal.
    pub iv: Option<f64>,
    /// The per-share Greeks the exposures come from (the input's, or computed from `iv`).
    pub greeks: Greeks,
    /// Dealer-signed exposures (units: module table).
    pub exposure: ExposureVector,
}

/// Both sides of one strike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrikeExposure {
    /// Strike, dollars.
    pub strike: f64,
    /// Call open interest, contracts (every listed call, with or without Greeks).
    pub call_open_interest: u64,
    /// Put open interest, contracts.
    pub put_open_interest: u64,
    /// Dealer-signed call exposures.
    pub call: ExposureVector,
    /// Dealer-signed put exposures (put GEX ≤ 0).
    pub put: ExposureVector,
}

impl StrikeExposure {
    fn empty(strike: f64) -> Self {
        Self {
            strike,
            call_open_interest: 0,
            put_open_interest: 0,
            call: ExposureVector::ZERO,
            put: ExposureVector::ZERO,
        }
    }

    /// call + put.
    #[inline]
    pub fn net(&self) -> ExposureVector {
        self.call + self.put
    }

    /// One kind of [`net`](Self::net), the same sum without the other eight (the level
    /// searches read one kind per pass over the strikes).
    #[inline]
    pub fn net_of(&self, kind: ExposureKind) -> f64 {
        self.call[kind] + self.put[kind]
    }

    fn merge(&mut self, other: &Self) {
        self.call_open_interest += other.call_open_interest;
        self.put_open_interest += other.put_open_interest;
        self.call += other.call;
        self.put += other.put;
    }
}

/// Exposures of one expiration, or of every expiration together (`expiration` = `None`), with
/// their levels.
#[derive(Debug, Clone, PartialEq)]
pub struct ExposureSummary {
    /// The expiration; `None` for the aggregate.
    pub expiration: Option<NaiveDate>,
    /// Its calendar days to expiry; `None` for the aggregate.
    pub dte: Option<i64>,
    /// Contracts whose exposures are included.
    pub contracts: usize,
    /// The strike profile, ascending strikes.
    pub strikes: Vec<StrikeExposure>,
    /// Σ call exposures.
    pub call_totals: ExposureVector,
    /// Σ put exposures (dealer-signed).
    pub put_totals: ExposureVector,
    /// Σ call open interest, contracts.
    pub call_open_interest: u64,
    /// Σ put open interest, contracts.
    pub put_open_interest: u64,
    /// Re-priced gamma flip level ([`super::flip`]).
    pub flip: FlipLevel,
    /// Re-priced flip level of delta-adjusted gamma.
    pub delta_adjusted_flip: FlipLevel,
    /// Where cumulative net GEX by strike changes sign ([`super::levels`]).
    pub gamma_flip: Option<f64>,
    /// Walls and gamma strikes.
    pub gamma_levels: GammaLevels,
    /// The named key levels.
    pub key_levels: KeyLevels,
    /// Call GEX / |put GEX|.
    pub gex_ratio: Option<f64>,
    /// Max pain over this summary's open interest.
    pub max_pain: Option<MaxPain>,
    /// The regime read.
    pub implications: Implications,
}

impl ExposureSummary {
    /// call + put totals.
    pub fn net_totals(&self) -> ExposureVector {
        self.call_totals + self.put_totals
    }

    /// The levels of `kind` at `spot`, derived on demand: the worker stores the strike profile
    /// they come from, not the levels (the API derives them per request).
    pub fn greek_levels(&self, kind: ExposureKind, spot: f64) -> GreekLevels {
        GreekLevels::from_profile(
            kind,
            &self.strikes,
            &cumulative_net(&self.strikes),
            self.call_totals[kind],
            self.put_totals[kind],
            spot,
        )
    }
}

/// Everything [`compute_exposures`] derives from one underlying's chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ExposureReport {
    /// Underlying symbol.
    pub underlying: String,
    /// Spot, dollars.
    pub spot: f64,
    /// Snapshot instant.
    pub as_of: DateTime<Utc>,
    /// Contracts left out of the exposures: no Greeks and no IV to compute them from, or
    /// expired. Their open interest still counts towards strike OI and max pain.
    pub contracts_without_greeks: usize,
    /// One summary per expiration, ascending.
    pub expirations: Vec<ExposureSummary>,
    /// Every expiration together.
    pub aggregate: ExposureSummary,
}

/// The dealer exposures of one contract, using its Greeks or, when it has none, Greeks computed
/// from its IV; `None` when neither is available or it has expired.
pub fn contract_exposure(
    contract: &ContractAnalytics,
    context: &UnderlyingContext,
) -> Option<ContractExposure> {
    let forward = context.forward(contract.expiration, contract.years_to_expiry);
    let per_share = per_share_greeks(contract, context, forward)?;
    Some(ContractExposure {
        expiration: contract.expiration,
        strike: contract.strike,
        option_type: contract.option_type,
        open_interest: contract.open_interest,
        dte: contract.dte,
        iv: contract.iv,
        greeks: per_share,
        exposure: contract_exposure_vector(contract, &per_share, context, forward),
    })
}

/// The contract's Greeks, or Greeks computed from its IV on `forward`; `None` when neither is
/// available or it has expired.
fn per_share_greeks(
    contract: &ContractAnalytics,
    context: &UnderlyingContext,
    forward: f64,
) -> Option<Greeks> {
    match contract.greeks {
        Some(g) => Some(g),
        None => {
            let iv = contract.iv?;
            let inputs = contract.pricing_inputs(context, forward, context.spot)?;
            greeks(&inputs, iv).ok()
        }
    }
}

/// The dealer-signed exposures of `contract` from its per-share Greeks `per_share`, taken
/// against the model's price (the spot, or the expiration's `forward` for Black-76).
fn contract_exposure_vector(
    contract: &ContractAnalytics,
    per_share: &Greeks,
    context: &UnderlyingContext,
    forward: f64,
) -> ExposureVector {
    let x = match context.model {
        PricingModel::BlackScholesMerton => context.spot,
        PricingModel::Black76 => forward,
    };
    exposure_vector(
        per_share,
        contract.option_type,
        contract.open_interest,
        x,
        context.spot,
    )
}

/// The dealer-signed exposures of `open_interest` contracts with per-share Greeks `g` taken
/// against price `x`, spot `spot` (formulas: the module table).
fn exposure_vector(
    g: &Greeks,
    option_type: OptionType,
    open_interest: u64,
    x: f64,
    spot: f64,
) -> ExposureVector {
    use ExposureKind as K;
    let n = option_type.sign() * open_interest as f64 * CONTRACT_MULTIPLIER;
    let k = x / spot;
    let per_pct = x * x * ONE_PERCENT;
    let gex = g.gamma * per_pct * n;
    let spot_delta = g.delta * k;
    let mut v = ExposureVector::ZERO;
    v[K::Delta] = spot_delta * n;
    v[K::Gamma] = gex;
    v[K::DeltaAdjustedGamma] = gex * spot_delta.abs();
    v[K::Vanna] = g.vanna * k * n;
    v[K::Charm] = g.charm * k * n;
    v[K::Vega] = g.vega * n;
    v[K::Theta] = g.theta * n;
    v[K::Speed] = g.speed * x * per_pct * ONE_PERCENT * n;
    v[K::Color] = g.color * per_pct * n;
    v[K::Zomma] = g.zomma * per_pct * n;
    v[K::Vomma] = g.vomma * n;
    v[K::Ultima] = g.ultima * n;
    v
}

/// Per-strike, per-expiration and aggregate dealer exposures of `contracts`, with
/// flip levels, walls, key levels, max pain and implications for each expiration and for all
/// of them together.
///
/// Contracts may come in any order. Every numeric input is validated first; a bad value is an
/// [`ExposureError`] naming the contract and field. An empty slice gives an empty report.
///
/// The exposures of one contract are [`contract_exposure`]'s; the report keeps only their sums.
pub fn compute_exposures(
    contracts: &[ContractAnalytics],
    context: &UnderlyingContext,
    config: &ExposureConfig,
) -> Result<ExposureReport, ExposureError> {
    context.validate()?;
    config.flip.validate()?;
    if !(config.implications.balance_band >= 0.0 && config.implications.balance_band.is_finite()) {
        return Err(ExposureError::Config {
            field: "implications.balance_band",
            reason: "must be a finite number ≥ 0".to_owned(),
        });
    }
    for (index, contract) in contracts.iter().enumerate() {
        contract.validate(index)?;
    }
    let spot = context.spot;
    let mut order: Vec<&ContractAnalytics> = contracts.iter().collect();
    let walk_order = |a: &&ContractAnalytics, b: &&ContractAnalytics| {
        a.expiration
            .cmp(&b.expiration)
            .then(a.strike.total_cmp(&b.strike))
            .then((a.option_type == OptionType::Put).cmp(&(b.option_type == OptionType::Put)))
    };
    // A chain build's contracts usually come in this order already (one settlement per date).
    if !order.is_sorted_by(|a, b| walk_order(a, b).is_le()) {
        order.sort_by(walk_order);
    }

    struct Group {
        expiration: NaiveDate,
        dte: i64,
        contracts: usize,
        strikes: Vec<StrikeExposure>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut curve = GammaCurve::with_capacity(contracts.len());
    let mut contracts_without_greeks = 0;
    /// What a run of contracts of one expiration and time to expiry shares.
    #[derive(Clone, Copy)]
    struct ExpirationTerms {
        forward: f64,
        curve: CurveTerms,
    }
    // Contracts of one expiration (and time to expiry) come together: its forward and curve
    // terms are computed once for them.
    let mut expiration_terms = RunCache::default();
    for (position, &contract) in order.iter().enumerate() {
        if groups
            .last()
            .is_none_or(|g| g.expiration != contract.expiration)
        {
            // Sized for a call and a put per strike (a one-sided strike grows it).
            let in_group =
                order[position..].partition_point(|c| c.expiration == contract.expiration);
            groups.push(Group {
                expiration: contract.expiration,
                dte: contract.dte,
                contracts: 0,
                strikes: Vec::with_capacity(in_group.div_ceil(2)),
            });
            curve.start_group();
        }
        let Some(group) = groups.last_mut() else {
            continue;
        };
        if group.strikes.last().is_none_or(|r| {
            StrikeKey::from_dollars(r.strike) != StrikeKey::from_dollars(contract.strike)
        }) {
            group.strikes.push(StrikeExposure::empty(contract.strike));
        }
        let Some(row) = group.strikes.last_mut() else {
            continue;
        };
        match contract.option_type {
            OptionType::Call => row.call_open_interest += contract.open_interest,
            OptionType::Put => row.put_open_interest += contract.open_interest,
        }
        let ExpirationTerms {
            forward,
            curve: curve_terms,
        } = expiration_terms.get(
            (contract.expiration, contract.years_to_expiry.to_bits()),
            |_| {
                let years = contract.years_to_expiry;
                let forward = context.forward(contract.expiration, years);
                ExpirationTerms {
                    forward,
                    curve: CurveTerms::new(forward, spot, years, context.rate),
                }
            },
        );
        // The per-contract records are not kept: the API derives them on demand
        // (`contract_exposure`), and at scale they would be most of this function's memory.
        match per_share_greeks(contract, context, forward) {
            Some(per_share) => {
                let exposure = contract_exposure_vector(contract, &per_share, context, forward);
                match contract.option_type {
                    OptionType::Call => row.call += exposure,
                    OptionType::Put => row.put += exposure,
                }
                group.contracts += 1;
            }
            None => contracts_without_greeks += 1,
        }
        if let Some(iv) = contract.iv
            && let Some(entry) = CurveContract::new(
                contract.option_type.sign(),
                contract.open_interest,
                contract.strike,
                iv,
                &curve_terms,
            )
        {
            curve.push(entry);
        }
    }

    let flips = curve.flips(spot, &config.flip);
    let total_contracts = groups.iter().map(|g| g.contracts).sum();
    let aggregate = summarize(
        None,
        None,
        total_contracts,
        strikes_across(groups.iter().map(|g| g.strikes.as_slice())),
        flips.aggregate,
        spot,
        config,
    );
    let expirations = groups
        .into_iter()
        .zip(flips.groups)
        .map(|(g, flip)| {
            summarize(
                Some(g.expiration),
                Some(g.dte),
                g.contracts,
                g.strikes,
                flip,
                spot,
                config,
            )
        })
        .collect();
    Ok(ExposureReport {
        underlying: context.underlying.clone(),
        spot,
        as_of: context.as_of,
        contracts_without_greeks,
        expirations,
        aggregate,
    })
}

/// Every strike of `groups` (each ascending, one row per strike) with the rows of that strike
/// summed across groups in group order, ascending. The groups' strikes come in runs that a
/// stable sort merges; a strike's rows stay in group order, so each sum is taken in the same
/// order whatever the layout.
fn strikes_across<'g>(
    groups: impl Iterator<Item = &'g [StrikeExposure]> + Clone,
) -> Vec<StrikeExposure> {
    let rows = groups.clone().map(<[StrikeExposure]>::len).sum();
    let mut order: Vec<(StrikeKey, &StrikeExposure)> = Vec::with_capacity(rows);
    for group in groups {
        order.extend(
            group
                .iter()
                .map(|row| (StrikeKey::from_dollars(row.strike), row)),
        );
    }
    if !order.is_sorted_by(|a, b| a.0 <= b.0) {
        order.sort_by_key(|(key, _)| *key);
    }
    let mut merged: Vec<StrikeExposure> = Vec::with_capacity(order.len());
    let mut last_key = None;
    for (key, row) in order {
        if last_key != Some(key) {
            last_key = Some(key);
            merged.push(StrikeExposure::empty(row.strike));
        }
        if let Some(strike) = merged.last_mut() {
            strike.merge(row);
        }
    }
    merged
}

fn summarize(
    expiration: Option<NaiveDate>,
    dte: Option<i64>,
    contracts: usize,
    strikes: Vec<StrikeExposure>,
    (flip, delta_adjusted_flip): (FlipLevel, FlipLevel),
    spot: f64,
    config: &ExposureConfig,
) -> ExposureSummary {
    let mut call_totals = ExposureVector::ZERO;
    let mut put_totals = ExposureVector::ZERO;
    let mut call_open_interest = 0;
    let mut put_open_interest = 0;
    for row in &strikes {
        call_totals += row.call;
        put_totals += row.put;
        call_open_interest += row.call_open_interest;
        put_open_interest += row.put_open_interest;
    }
    let gamma_levels = GammaLevels::from_profile(&strikes, spot);
    let key_levels = KeyLevels::from_profile(&strikes, &gamma_levels, flip.level, spot);
    let open_interest: Vec<OpenInterestAtStrike> = strikes
        .iter()
        .map(|r| OpenInterestAtStrike {
            strike: r.strike,
            call: r.call_open_interest,
            put: r.put_open_interest,
        })
        .collect();
    let call_gex = call_totals[ExposureKind::Gamma];
    let put_gex = put_totals[ExposureKind::Gamma];
    ExposureSummary {
        expiration,
        dte,
        contracts,
        // Where cumulative net GEX by strike changes sign (`greek_levels`' gamma flip level).
        gamma_flip: running_sum_crossing(&strikes, |r| r.net_of(ExposureKind::Gamma), spot),
        max_pain: max_pain(&open_interest, spot),
        gex_ratio: gex_ratio(call_gex, put_gex),
        implications: Implications::from_gex(call_gex, put_gex, &config.implications),
        strikes,
        call_totals,
        put_totals,
        call_open_interest,
        put_open_interest,
        flip,
        delta_adjusted_flip,
        gamma_levels,
        key_levels,
    }
}
