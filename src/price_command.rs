//! `optics price`: the single-contract calculator.

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use optics_compute::pricing::{
    Greeks, OptionInputs, OptionType, PricingModel, greeks, implied_vol,
};
use optics_compute::time::DAYS_PER_YEAR;
use serde_json::json;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CliOptionType {
    Call,
    Put,
}

/// Inputs of one contract. Rates and yields are decimals (0.05 = 5 %), time is calendar days.
#[derive(Debug, Args)]
pub(crate) struct PriceArgs {
    /// Call or put.
    #[arg(long = "type", value_enum)]
    option_type: CliOptionType,
    /// Spot price of the underlying (Black–Scholes–Merton).
    #[arg(long, conflicts_with = "forward", required_unless_present = "forward")]
    spot: Option<f64>,
    /// Forward price (Black-76, as for index options); replaces --spot and --div.
    #[arg(long, conflicts_with = "div")]
    forward: Option<f64>,
    /// Strike price.
    #[arg(long)]
    strike: f64,
    /// Calendar days to expiry (fractions allowed: 0.5 is twelve hours).
    #[arg(long)]
    days: f64,
    /// Continuously compounded risk-free rate, decimal.
    #[arg(long, default_value_t = 0.0)]
    rate: f64,
    /// Continuously compounded dividend yield, decimal.
    #[arg(long, default_value_t = 0.0)]
    div: f64,
    /// Implied volatility, decimal (0.25 = 25 %).
    #[arg(long, conflicts_with = "price", required_unless_present = "price")]
    iv: Option<f64>,
    /// Observed option price, dollars per share: the implied volatility is solved from it.
    #[arg(long)]
    price: Option<f64>,
}

pub(crate) fn run(args: &PriceArgs) -> anyhow::Result<()> {
    let (model, underlying) = match (args.spot, args.forward) {
        (Some(spot), None) => (PricingModel::BlackScholesMerton, spot),
        (None, Some(forward)) => (PricingModel::Black76, forward),
        _ => bail!("give exactly one of --spot or --forward"),
    };
    let inputs = OptionInputs {
        option_type: match args.option_type {
            CliOptionType::Call => OptionType::Call,
            CliOptionType::Put => OptionType::Put,
        },
        model,
        underlying,
        strike: args.strike,
        years: args.days / DAYS_PER_YEAR,
        rate: args.rate,
        dividend_yield: args.div,
    };
    let (iv, iv_source) = match (args.iv, args.price) {
        (Some(iv), None) => (iv, "input"),
        (None, Some(price)) => (
            implied_vol(&inputs, price).context("cannot solve the implied volatility")?,
            "solved_from_price",
        ),
        _ => bail!("give exactly one of --iv or --price"),
    };
    let g = greeks(&inputs, iv).context("cannot price the contract")?;
    println!(
        "{}",
        serde_json::to_string_pretty(&payload(&inputs, iv, iv_source, &g))?
    );
    Ok(())
}

fn payload(inputs: &OptionInputs, iv: f64, iv_source: &str, g: &Greeks) -> serde_json::Value {
    json!({
        "inputs": {
            "type": inputs.option_type.to_string(),
            "model": match inputs.model {
                PricingModel::BlackScholesMerton => "black_scholes_merton",
                PricingModel::Black76 => "black76",
            },
            "underlying": inputs.underlying,
            "forward": inputs.forward(),
            "strike": inputs.strike,
            "years": inputs.years,
            "rate": inputs.rate,
            "dividend_yield": inputs.dividend_yield,
        },
        "iv": iv,
        "iv_source": iv_source,
        "price": g.price,
        "intrinsic_value": inputs.intrinsic_value(),
        "extrinsic_value": g.price - inputs.intrinsic_value(),
        "greeks": {
            "delta": g.delta,
            "gamma": g.gamma,
            "theta": g.theta,
            "vega": g.vega,
            "rho": g.rho,
            "epsilon": g.epsilon,
            "vanna": g.vanna,
            "charm": g.charm,
            "vomma": g.vomma,
            "veta": g.veta,
            "speed": g.speed,
            "zomma": g.zomma,
            "color": g.color,
            "ultima": g.ultima,
            "dual_delta": g.dual_delta,
        },
        "units": {
            "price": "dollars per share",
            "iv": "decimal, annualised",
            "delta": "per $1 of the underlying",
            "gamma": "delta per $1",
            "theta": "dollars per calendar day",
            "vega": "dollars per vol point",
            "rho": "dollars per point of rate",
            "epsilon": "dollars per point of dividend yield",
            "vanna": "delta per vol point",
            "charm": "delta per calendar day",
            "vomma": "vega per vol point",
            "veta": "vega per calendar day",
            "speed": "gamma per $1",
            "zomma": "gamma per vol point",
            "color": "gamma per calendar day",
            "ultima": "vomma per vol point",
            "dual_delta": "dollars per $1 of strike",
        },
        "time_basis": "calendar days / 365",
    })
}
