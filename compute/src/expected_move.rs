//! Expected move to an expiration from its at-the-money straddle.
//!
//! The move is the straddle's mid price (call mid + put mid, dollars per share) at the money:
//! the market's price of the expected absolute move to expiration (≈ 0.8 σ√T·F for a lognormal
//! forward). "At the money" is **the expiration's forward**: the straddle is interpolated
//! linearly in strike between the two listed strikes that bracket the forward, each with a
//! two-sided call and put (both mids present). A forward outside the range of such strikes uses
//! the nearest one; a forward on a listed strike uses that strike alone. The bounds are
//! spot ∓ the move, and the move as a fraction of spot is `expected_move_fraction` (the API
//! multiplies by 100 where it reports percent).
//!
//! Expiration choice ([`ExpectedMoveRequest`]): the requested one, which must be listed (a
//! same-day expiration is allowed when asked for by date); otherwise the nearest expiration with
//! dte > 0 — the same-day expiration is skipped by default because its straddle is mostly
//! intrinsic and decays through the day — unless `include_same_day` is set.

use chrono::NaiveDate;

use crate::exposure::{ContractAnalytics, ExposureError, UnderlyingContext};
use crate::pricing::OptionType;

/// Why there is no expected move.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExpectedMoveError {
    /// A bad contract or context field.
    #[error(transparent)]
    Input(#[from] ExposureError),
    /// No expiration qualifies (none listed, or only same-day ones and they are skipped).
    #[error("no expiration to price an expected move for{0}")]
    NoExpiration(&'static str),
    /// The requested expiration is not among the contracts.
    #[error("expiration {0} is not listed")]
    ExpirationNotListed(NaiveDate),
    /// No strike of the expiration has both a call and a put mid.
    #[error("expiration {0} has no strike with a two-sided call and put to price a straddle")]
    NoStraddle(NaiveDate),
}

/// Which expiration to price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExpectedMoveRequest {
    /// A listed expiration; `None` for the nearest.
    pub expiration: Option<NaiveDate>,
    /// Whether the nearest may be today's expiration (zero-dte uses this).
    pub include_same_day: bool,
}

/// The expected move of one expiration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExpectedMove {
    /// The expiration priced.
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i64,
    /// Years to it (/365).
    pub years_to_expiry: f64,
    /// Spot, dollars.
    pub spot: f64,
    /// The forward the straddle is centred on, dollars.
    pub forward: f64,
    /// The listed strike at or below the forward used (the only one when not interpolating).
    pub lower_strike: f64,
    /// The listed strike at or above the forward used.
    pub upper_strike: f64,
    /// Weight of `upper_strike` in the interpolation, in [0, 1].
    pub upper_weight: f64,
    /// Interpolated call mid, dollars per share.
    pub call_mid: f64,
    /// Interpolated put mid, dollars per share.
    pub put_mid: f64,
    /// The straddle mid = the expected move, dollars.
    pub expected_move_dollars: f64,
    /// The move / spot (0.025 = 2.5 %).
    pub expected_move_fraction: f64,
    /// spot − move, dollars.
    pub lower_bound: f64,
    /// spot + move, dollars.
    pub upper_bound: f64,
}

/// The expiration a request resolves to.
pub fn select_expiration(
    contracts: &[ContractAnalytics],
    request: &ExpectedMoveRequest,
) -> Result<NaiveDate, ExpectedMoveError> {
    if let Some(expiration) = request.expiration {
        return if contracts.iter().any(|c| c.expiration == expiration) {
            Ok(expiration)
        } else {
            Err(ExpectedMoveError::ExpirationNotListed(expiration))
        };
    }
    let min_dte = if request.include_same_day { 0 } else { 1 };
    contracts
        .iter()
        .filter(|c| c.dte >= min_dte && c.years_to_expiry > 0.0)
        .map(|c| c.expiration)
        .min()
        .ok_or(ExpectedMoveError::NoExpiration(
            if request.include_same_day {
                ""
            } else {
                " (same-day expirations are skipped)"
            },
        ))
}

/// The expected move of the requested (or nearest) expiration; see the module docs.
pub fn expected_move(
    contracts: &[ContractAnalytics],
    context: &UnderlyingContext,
    request: &ExpectedMoveRequest,
) -> Result<ExpectedMove, ExpectedMoveError> {
    context.validate()?;
    for (index, contract) in contracts.iter().enumerate() {
        contract.validate(index)?;
    }
    let expiration = select_expiration(contracts, request)?;
    let of_expiration: Vec<&ContractAnalytics> = contracts
        .iter()
        .filter(|c| c.expiration == expiration)
        .collect();
    let (dte, years) = of_expiration
        .first()
        .map_or((0, 0.0), |c| (c.dte, c.years_to_expiry));
    // Strikes with both mids, ascending: (strike, call mid, put mid).
    let mut straddles: Vec<(f64, f64, f64)> = Vec::new();
    let mut calls: Vec<(f64, f64)> = of_expiration
        .iter()
        .filter(|c| c.option_type == OptionType::Call)
        .filter_map(|c| c.mid.map(|m| (c.strike, m)))
        .collect();
    calls.sort_by(|a, b| a.0.total_cmp(&b.0));
    for put in of_expiration
        .iter()
        .filter(|c| c.option_type == OptionType::Put)
    {
        let Some(put_mid) = put.mid else { continue };
        if let Ok(i) = calls.binary_search_by(|c| c.0.total_cmp(&put.strike)) {
            straddles.push((put.strike, calls[i].1, put_mid));
        }
    }
    straddles.sort_by(|a, b| a.0.total_cmp(&b.0));
    straddles.dedup_by(|a, b| a.0 == b.0);
    if straddles.is_empty() {
        return Err(ExpectedMoveError::NoStraddle(expiration));
    }
    let forward = context.forward(expiration, years);
    let above = straddles.partition_point(|s| s.0 < forward);
    let (low, high, upper_weight) = if above == 0 {
        (straddles[0], straddles[0], 0.0)
    } else if above == straddles.len() {
        let last = straddles[straddles.len() - 1];
        (last, last, 0.0)
    } else if straddles[above].0 == forward {
        (straddles[above], straddles[above], 0.0)
    } else {
        let (low, high) = (straddles[above - 1], straddles[above]);
        (low, high, (forward - low.0) / (high.0 - low.0))
    };
    let blend = |a: f64, b: f64| a + upper_weight * (b - a);
    let call_mid = blend(low.1, high.1);
    let put_mid = blend(low.2, high.2);
    let spot = context.spot;
    let straddle = call_mid + put_mid;
    Ok(ExpectedMove {
        expiration,
        dte,
        years_to_expiry: years,
        spot,
        forward,
        lower_strike: low.0,
        upper_strike: high.0,
        upper_weight,
        call_mid,
        put_mid,
        expected_move_dollars: straddle,
        expected_move_fraction: straddle / spot,
        lower_bound: spot - straddle,
        upper_bound: spot + straddle,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::DateTime;

    use super::*;
    use crate::pricing::PricingModel;

    const SPOT: f64 = 100.0;

    fn date(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, d).unwrap()
    }

    fn context(forwards: &[(u32, f64)]) -> UnderlyingContext {
        UnderlyingContext {
            underlying: "TEST".to_owned(),
            spot: SPOT,
            rate: 0.04,
            dividend_yield: 0.0,
            model: PricingModel::BlackScholesMerton,
            forwards: forwards
                .iter()
                .map(|&(d, f)| (date(d), f))
                .collect::<BTreeMap<_, _>>(),
            as_of: DateTime::from_timestamp(1_795_100_000, 0).unwrap(),
        }
    }

    fn leg(
        day: u32,
        dte: i64,
        strike: f64,
        option_type: OptionType,
        mid: Option<f64>,
    ) -> ContractAnalytics {
        ContractAnalytics {
            expiration: date(day),
            strike,
            option_type,
            open_interest: 0,
            volume: 0,
            bid: None,
            ask: None,
            mid,
            iv: None,
            greeks: None,
            years_to_expiry: (dte as f64 + 0.25) / 365.0,
            dte,
        }
    }

    /// A same-day expiration (day 1) and a 7-day one (day 8) with straddles at 95/100/105.
    fn chain() -> Vec<ContractAnalytics> {
        use OptionType::{Call, Put};
        let mut c = vec![
            leg(1, 0, 100.0, Call, Some(0.9)),
            leg(1, 0, 100.0, Put, Some(0.7)),
        ];
        for (strike, call, put) in [(95.0, 5.6, 0.9), (100.0, 2.3, 2.1), (105.0, 0.6, 5.3)] {
            c.push(leg(8, 7, strike, Call, Some(call)));
            c.push(leg(8, 7, strike, Put, Some(put)));
        }
        // A call without a put mid at 110 never forms a straddle.
        c.push(leg(8, 7, 110.0, Call, Some(0.1)));
        c.push(leg(8, 7, 110.0, Put, None));
        c
    }

    #[test]
    fn interpolates_the_straddle_at_the_forward() {
        // Forward 101.5: 30 % of the way from 100 to 105.
        let em = expected_move(
            &chain(),
            &context(&[(8, 101.5)]),
            &ExpectedMoveRequest::default(),
        )
        .unwrap();
        assert_eq!(em.expiration, date(8), "the same-day expiration is skipped");
        assert_eq!(em.dte, 7);
        assert_eq!((em.lower_strike, em.upper_strike), (100.0, 105.0));
        let w = (101.5 - 100.0) / 5.0;
        let straddle = (1.0 - w) * (2.3 + 2.1) + w * (0.6 + 5.3);
        assert!((em.upper_weight - w).abs() < 1e-15);
        assert!((em.expected_move_dollars - straddle).abs() < 1e-12);
        assert!((em.expected_move_fraction - straddle / SPOT).abs() < 1e-15);
        assert!((em.lower_bound - (SPOT - straddle)).abs() < 1e-12);
        assert!((em.upper_bound - (SPOT + straddle)).abs() < 1e-12);
        assert!((em.call_mid + em.put_mid - straddle).abs() < 1e-12);
    }

    #[test]
    fn forward_on_a_strike_or_outside_the_straddles() {
        let on = expected_move(
            &chain(),
            &context(&[(8, 100.0)]),
            &ExpectedMoveRequest::default(),
        )
        .unwrap();
        assert_eq!(
            (on.lower_strike, on.upper_strike, on.upper_weight),
            (100.0, 100.0, 0.0)
        );
        assert!((on.expected_move_dollars - 4.4).abs() < 1e-12);
        // 110 has no put mid, so a forward of 108 uses 105, the highest straddle.
        let out = expected_move(
            &chain(),
            &context(&[(8, 108.0)]),
            &ExpectedMoveRequest::default(),
        )
        .unwrap();
        assert_eq!((out.lower_strike, out.upper_strike), (105.0, 105.0));
        assert!((out.expected_move_dollars - 5.9).abs() < 1e-12);
        let below = expected_move(
            &chain(),
            &context(&[(8, 90.0)]),
            &ExpectedMoveRequest::default(),
        )
        .unwrap();
        assert_eq!(below.lower_strike, 95.0);
    }

    #[test]
    fn carry_forward_when_none_is_given() {
        // F = S·e^{rT} with T = 7.25/365: between 100 and 105.
        let em = expected_move(&chain(), &context(&[]), &ExpectedMoveRequest::default()).unwrap();
        let forward = SPOT * (0.04f64 * 7.25 / 365.0).exp();
        assert!((em.forward - forward).abs() < 1e-12);
        let w = (forward - 100.0) / 5.0;
        assert!((em.expected_move_dollars - ((1.0 - w) * 4.4 + w * 5.9)).abs() < 1e-12);
    }

    #[test]
    fn same_day_when_asked() {
        let request = ExpectedMoveRequest {
            expiration: None,
            include_same_day: true,
        };
        let em = expected_move(&chain(), &context(&[]), &request).unwrap();
        assert_eq!((em.expiration, em.dte), (date(1), 0));
        assert!((em.expected_move_dollars - 1.6).abs() < 1e-12);
        let by_date = ExpectedMoveRequest {
            expiration: Some(date(1)),
            include_same_day: false,
        };
        assert_eq!(
            expected_move(&chain(), &context(&[]), &by_date)
                .unwrap()
                .expiration,
            date(1)
        );
    }

    #[test]
    fn errors_say_why() {
        let request = ExpectedMoveRequest {
            expiration: Some(date(15)),
            include_same_day: false,
        };
        assert_eq!(
            expected_move(&chain(), &context(&[]), &request).unwrap_err(),
            ExpectedMoveError::ExpirationNotListed(date(15))
        );
        let only_today: Vec<ContractAnalytics> =
            chain().into_iter().filter(|c| c.dte == 0).collect();
        assert!(matches!(
            expected_move(&only_today, &context(&[]), &ExpectedMoveRequest::default()),
            Err(ExpectedMoveError::NoExpiration(_))
        ));
        let one_sided: Vec<ContractAnalytics> = chain()
            .into_iter()
            .map(|c| match c.option_type {
                OptionType::Put => ContractAnalytics { mid: None, ..c },
                OptionType::Call => c,
            })
            .collect();
        assert_eq!(
            expected_move(&one_sided, &context(&[]), &ExpectedMoveRequest::default()).unwrap_err(),
            ExpectedMoveError::NoStraddle(date(8))
        );
        let mut bad = chain();
        bad[0].strike = -1.0;
        assert!(matches!(
            expected_move(&bad, &context(&[]), &ExpectedMoveRequest::default()),
            Err(ExpectedMoveError::Input(_))
        ));
    }
}
