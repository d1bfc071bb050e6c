//! The plain inputs of the exposure, flow and expected-move functions.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};

use super::ExposureError;
use crate::pricing::{Greeks, OptionInputs, OptionType, PricingModel};

/// One listed contract as the chain snapshot knows it. Prices are dollars per share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContractAnalytics {
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Strike, dollars; finite, > 0.
    pub strike: f64,
    /// Call or put.
    pub option_type: OptionType,
    /// Open interest, contracts (as of the close of the previous session).
    pub open_interest: u64,
    /// Contracts traded so far this session (cumulative).
    pub volume: u64,
    /// Best bid, dollars per share; `None` when there is none.
    pub bid: Option<f64>,
    /// Best ask, dollars per share; `None` when there is none.
    pub ask: Option<f64>,
    /// Mid, dollars per share; `None` unless the quote is two-sided.
    pub mid: Option<f64>,
    /// Implied volatility, decimal (0.20 = 20 %); `None` when it has no solution.
    pub iv: Option<f64>,
    /// Per-share Greeks at `iv` ([`crate::pricing::Greeks`] units), taken with respect to the
    /// context's model underlying: the spot for Black–Scholes–Merton, the expiration's forward
    /// for Black-76. `None` when there is no IV.
    pub greeks: Option<Greeks>,
    /// Years to the 16:00 New York close of the expiration (/365); ≤ 0 once expired.
    pub years_to_expiry: f64,
    /// Calendar days to expiration (0 on expiration day).
    pub dte: i64,
}

/// The underlying's market at the snapshot instant.
#[derive(Debug, Clone, PartialEq)]
pub struct UnderlyingContext {
    /// Underlying symbol (`SPY`, `SPX`).
    pub underlying: String,
    /// Spot (the price the API reports as `stock_price`), dollars; finite, > 0.
    pub spot: f64,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// Continuous dividend yield, decimal: the carry used for an expiration that has no entry in
    /// `forwards` (F = S·e^{(r − q)T}).
    pub dividend_yield: f64,
    /// The model the contracts' Greeks are in (which price `X` they are taken against).
    pub model: PricingModel,
    /// Forward per expiration (parity-implied or carry), dollars; the same forwards the Greeks
    /// were computed with.
    pub forwards: BTreeMap<NaiveDate, f64>,
    /// The snapshot instant.
    pub as_of: DateTime<Utc>,
}

impl UnderlyingContext {
    /// The forward of `expiration`: the `forwards` entry, else S·e^{(r − q)T}.
    pub fn forward(&self, expiration: NaiveDate, years: f64) -> f64 {
        match self.forwards.get(&expiration) {
            Some(&forward) => forward,
            None => self.spot * ((self.rate - self.dividend_yield) * years.max(0.0)).exp(),
        }
    }

    pub(crate) fn validate(&self) -> Result<(), ExposureError> {
        let context = |field, reason: &str| ExposureError::Context {
            field,
            reason: reason.to_owned(),
        };
        if !(self.spot.is_finite() && self.spot > 0.0) {
            return Err(context("spot", "must be a finite number > 0"));
        }
        if !self.rate.is_finite() {
            return Err(context("rate", "must be a finite number"));
        }
        if !self.dividend_yield.is_finite() {
            return Err(context("dividend_yield", "must be a finite number"));
        }
        if let Some((expiration, forward)) = self
            .forwards
            .iter()
            .find(|(_, f)| !(f.is_finite() && **f > 0.0))
        {
            return Err(ExposureError::Context {
                field: "forwards",
                reason: format!("{forward} for {expiration} is not a finite number > 0"),
            });
        }
        Ok(())
    }
}

impl ContractAnalytics {
    /// Every numeric field that is present finite and in its domain, in one test without a
    /// branch per field ([`validate`](Self::validate)'s rules; it names the field when not).
    /// Finiteness is one sum: x·0 is 0 for a finite x and NaN otherwise.
    #[inline]
    pub(super) fn in_domain(&self) -> bool {
        let present = |v: Option<f64>| v.unwrap_or(0.0);
        let greeks = self.greeks.as_ref().map_or(0.0, |g| {
            [
                g.delta, g.gamma, g.vanna, g.charm, g.vega, g.theta, g.speed, g.color, g.zomma,
                g.vomma, g.ultima,
            ]
            .iter()
            .fold(0.0, |sum, v| sum + v * 0.0)
        });
        let (bid, ask, mid) = (present(self.bid), present(self.ask), present(self.mid));
        let finite = self.strike * 0.0
            + self.years_to_expiry * 0.0
            + bid * 0.0
            + ask * 0.0
            + mid * 0.0
            + present(self.iv) * 0.0
            + greeks;
        (finite == 0.0)
            & (self.strike > 0.0)
            & (bid >= 0.0)
            & (ask >= 0.0)
            & (mid >= 0.0)
            & self.iv.is_none_or(|iv| iv > 0.0)
    }

    /// Checks every numeric field that is present: finite, and in its domain.
    pub(crate) fn validate(&self, index: usize) -> Result<(), ExposureError> {
        if self.in_domain() {
            return Ok(());
        }
        let bad = |field: &'static str, reason: String| ExposureError::Contract {
            index,
            strike: self.strike,
            option_type: self.option_type,
            expiration: self.expiration,
            field,
            reason,
        };
        if !(self.strike.is_finite() && self.strike > 0.0) {
            return Err(bad(
                "strike",
                format!("{} is not a finite number > 0", self.strike),
            ));
        }
        if !self.years_to_expiry.is_finite() {
            return Err(bad(
                "years_to_expiry",
                format!("{} is not finite", self.years_to_expiry),
            ));
        }
        for (field, value) in [("bid", self.bid), ("ask", self.ask), ("mid", self.mid)] {
            if let Some(v) = value
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(bad(field, format!("{v} is not a finite price ≥ 0")));
            }
        }
        if let Some(iv) = self.iv
            && !(iv.is_finite() && iv > 0.0)
        {
            return Err(bad("iv", format!("{iv} is not a finite volatility > 0")));
        }
        if let Some(g) = &self.greeks {
            let used = [
                ("greeks.delta", g.delta),
                ("greeks.gamma", g.gamma),
                ("greeks.vanna", g.vanna),
                ("greeks.charm", g.charm),
                ("greeks.vega", g.vega),
                ("greeks.theta", g.theta),
                ("greeks.speed", g.speed),
                ("greeks.color", g.color),
                ("greeks.zomma", g.zomma),
                ("greeks.vomma", g.vomma),
                ("greeks.ultima", g.ultima),
            ];
            if let Some((field, v)) = used.into_iter().find(|(_, v)| !v.is_finite()) {
                return Err(bad(field, format!("{v} is not finite")));
            }
        }
        Ok(())
    }

    /// The pricing inputs of this contract at spot `spot` (forward moved proportionally):
    /// `None` once expired.
    pub(crate) fn pricing_inputs(
        &self,
        context: &UnderlyingContext,
        forward: f64,
        spot: f64,
    ) -> Option<OptionInputs> {
        let years = self.years_to_expiry;
        if !(years > 0.0) {
            return None;
        }
        let scaled_forward = forward * (spot / context.spot);
        let inputs = match context.model {
            // The forward's implied carry q = r − ln(F/S)/T keeps BSM on the same forward.
            PricingModel::BlackScholesMerton => OptionInputs {
                option_type: self.option_type,
                model: PricingModel::BlackScholesMerton,
                underlying: spot,
                strike: self.strike,
                years,
                rate: context.rate,
                dividend_yield: context.rate - (forward / context.spot).ln() / years,
            },
            PricingModel::Black76 => OptionInputs {
                option_type: self.option_type,
                model: PricingModel::Black76,
                underlying: scaled_forward,
                strike: self.strike,
                years,
                rate: context.rate,
                dividend_yield: 0.0,
            },
        };
        inputs.validate().ok().map(|()| inputs)
    }
}
