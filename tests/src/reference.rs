//! Reference math for tests that must not lean on the library's own: a standard normal CDF
//! from Numerical Recipes' `erfcc` (a Chebyshev fit, relative error < 1.2e-7), shared by the
//! strategy tests of `compute` and `api`; the flow sums of one strike or expiration, shared by
//! the flow aggregate tests of `compute` and the pipeline.

use optics_schemas::{FlowAggregateKey, FlowSnapshotRow, FlowTotals, OptionType};

/// The fit's coefficients, lowest power of t first, after the constant −1.265_512_23.
const ERFCC: [f64; 9] = [
    1.000_023_68,
    0.374_091_96,
    0.096_784_18,
    -0.186_288_06,
    0.278_868_07,
    -1.135_203_98,
    1.488_515_87,
    -0.822_152_23,
    0.170_872_77,
];

/// erfc(z) for z ≥ 0 by the fit, its polynomial in t by Horner's rule from the highest
/// coefficient down (a loop: the nested expression takes rustfmt seconds to lay out).
fn erfcc(z: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * z);
    let (highest, rest) = ERFCC.split_last().expect("coefficients");
    let poly = rest.iter().rev().fold(*highest, |acc, c| c + t * acc);
    t * (-z * z - 1.265_512_23 + t * poly).exp()
}

/// Standard normal CDF, independent of the library's.
pub fn normal_cdf(x: f64) -> f64 {
    let erfc = erfcc(x.abs() / std::f64::consts::SQRT_2);
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// The sums of the `flow` rows of one strike (across expirations) or one expiration, by
/// filters and iterator sums rather than the library's accumulation: premiums are added in the
/// rows' order, a row without a price counts 0.
pub fn flow_group_totals(rows: &[FlowSnapshotRow], key: FlowAggregateKey) -> FlowTotals {
    let group: Vec<&FlowSnapshotRow> = rows
        .iter()
        .filter(|r| match key {
            FlowAggregateKey::Strike(strike) => r.strike == strike,
            FlowAggregateKey::Expiration(expiration) => r.expiration == expiration,
        })
        .collect();
    let side = |option_type: OptionType| -> Vec<&FlowSnapshotRow> {
        group
            .iter()
            .copied()
            .filter(|r| r.option_type == option_type)
            .collect()
    };
    let volume = |rows: &[&FlowSnapshotRow]| rows.iter().map(|r| r.volume).sum::<u64>();
    let premium = |rows: &[&FlowSnapshotRow]| {
        rows.iter()
            .map(|r| r.premium_usd.unwrap_or(0.0))
            .sum::<f64>()
    };
    let (calls, puts) = (side(OptionType::Call), side(OptionType::Put));
    FlowTotals {
        call_volume: volume(&calls),
        put_volume: volume(&puts),
        volume: volume(&group),
        call_premium_usd: premium(&calls),
        put_premium_usd: premium(&puts),
        premium_usd: premium(&group),
        contracts: group.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::normal_cdf;

    #[test]
    fn matches_known_values_within_the_fits_error() {
        // Φ(0) = 1/2, Φ(1) = 0.841344746068543, Φ(−2) = 0.022750131948179 (tables).
        for (x, phi) in [
            (0.0, 0.5),
            (1.0, 0.841_344_746_068_543),
            (-2.0, 0.022_750_131_948_179),
        ] {
            assert!((normal_cdf(x) - phi).abs() < 2e-7 * phi.max(1e-3), "Φ({x})");
        }
        assert!((normal_cdf(0.7) + normal_cdf(-0.7) - 1.0).abs() < 1e-15);
    }
}
