//! Batch kernels: implied volatility and the Greek set over whole arrays of contracts, in
//! parallel with rayon, writing straight into column vectors (and Arrow arrays).
//!
//! Rows are independent, so the arrays are cut into fixed-size chunks and each chunk is solved
//! on whichever core is free. Results are identical to the single-contract functions, row for
//! row: every row goes through exactly the same operations.

use arrow_array::{Array, BooleanArray, Float64Array, StringArray};
use rayon::prelude::*;

use super::greeks::greeks_with;
use super::implied_vol::{ImpliedVolError, Normalised, normalise_with};
use super::lbr::lanes::{LANES, solve_block};
use super::{MarketTerms, MarketTermsMemo, OptionInputs, OptionType, PricingModel};

/// Rows per parallel task: large enough to amortise scheduling, small enough to balance.
const CHUNK_ROWS: usize = 4096;

/// A chain (or any set of contracts) as borrowed columns, one entry per contract.
#[derive(Debug, Clone, Copy)]
pub struct ChainColumns<'a> {
    /// Spot (BSM) or forward (Black-76) for every row.
    pub model: PricingModel,
    /// Call or put per row.
    pub option_type: &'a [OptionType],
    /// Spot or forward per row, dollars.
    pub underlying: &'a [f64],
    /// Strike per row, dollars.
    pub strike: &'a [f64],
    /// Years to expiry per row.
    pub years: &'a [f64],
    /// Continuous rate per row, decimal.
    pub rate: &'a [f64],
    /// Continuous dividend yield per row, decimal (zeros for Black-76).
    pub dividend_yield: &'a [f64],
}

impl ChainColumns<'_> {
    /// Number of rows; every column must have it.
    pub fn len(&self) -> usize {
        self.strike.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.strike.is_empty()
    }

    fn check_lengths(&self, extra: &[usize]) {
        let n = self.len();
        let lengths = [
            self.option_type.len(),
            self.underlying.len(),
            self.years.len(),
            self.rate.len(),
            self.dividend_yield.len(),
        ];
        assert!(
            lengths.iter().chain(extra).all(|&l| l == n),
            "every column of a batch must have the same length"
        );
    }

    #[inline(always)]
    fn row(&self, i: usize) -> OptionInputs {
        OptionInputs {
            option_type: self.option_type[i],
            model: self.model,
            underlying: self.underlying[i],
            strike: self.strike[i],
            years: self.years[i],
            rate: self.rate[i],
            dividend_yield: self.dividend_yield[i],
        }
    }
}

/// Whether a row's implied volatility was solved, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum IvStatus {
    /// Solved; the row's values are valid.
    #[default]
    Solved,
    /// Inputs out of domain (see [`super::OptionInputs::validate`]).
    InvalidInput,
    /// Price below intrinsic.
    BelowIntrinsic,
    /// Price equals intrinsic: no time value.
    NoTimeValue,
    /// Price at or above the no-arbitrage maximum.
    AboveMaximum,
}

impl IvStatus {
    fn from_error(error: &ImpliedVolError) -> Self {
        match error {
            ImpliedVolError::InvalidInput(_) => Self::InvalidInput,
            ImpliedVolError::BelowIntrinsic { .. } => Self::BelowIntrinsic,
            ImpliedVolError::NoTimeValue { .. } => Self::NoTimeValue,
            ImpliedVolError::AboveMaximum { .. } => Self::AboveMaximum,
        }
    }

    /// The same code [`ImpliedVolError::code`] gives, or `None` when solved.
    pub fn code(self) -> Option<&'static str> {
        match self {
            Self::Solved => None,
            Self::InvalidInput => Some("invalid_input"),
            Self::BelowIntrinsic => Some("below_intrinsic"),
            Self::NoTimeValue => Some("no_time_value"),
            Self::AboveMaximum => Some("above_maximum"),
        }
    }
}

macro_rules! greek_columns {
    ($($field:ident),* $(,)?) => {
        /// Implied volatility and the Greek set as columns (units as on
        /// [`super::Greeks`]). Where `iv_status[i]` is not `Solved`, row `i` of every value
        /// column is NaN and must be read as "absent" (the Arrow form makes it null).
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct GreekColumns {
            /// Implied volatility, decimal.
            pub iv: Vec<f64>,
            /// Per-row outcome of the solve.
            pub iv_status: Vec<IvStatus>,
            $(
                #[doc = concat!("`", stringify!($field), "` per row (see `Greeks`).")]
                pub $field: Vec<f64>,
            )*
        }

        struct GreekColumnsChunk<'a> {
            iv: &'a mut [f64],
            iv_status: &'a mut [IvStatus],
            $($field: &'a mut [f64],)*
        }

        impl GreekColumns {
            fn with_len(n: usize) -> Self {
                Self {
                    iv: vec![f64::NAN; n],
                    iv_status: vec![IvStatus::Solved; n],
                    $($field: vec![f64::NAN; n],)*
                }
            }

            /// Number of rows.
            pub fn len(&self) -> usize {
                self.iv.len()
            }

            /// True when there are no rows.
            pub fn is_empty(&self) -> bool {
                self.iv.is_empty()
            }

            /// Disjoint mutable views of `chunk` rows each, for parallel writers.
            fn chunks_mut(&mut self, chunk: usize) -> Vec<GreekColumnsChunk<'_>> {
                let capacity = self.iv.len().div_ceil(chunk.max(1));
                let mut iv = self.iv.chunks_mut(chunk);
                let mut iv_status = self.iv_status.chunks_mut(chunk);
                $(let mut $field = self.$field.chunks_mut(chunk);)*
                let mut chunks = Vec::with_capacity(capacity);
                while let (Some(iv), Some(iv_status)) = (iv.next(), iv_status.next()) {
                    chunks.push(GreekColumnsChunk {
                        iv,
                        iv_status,
                        $($field: $field.next().expect("columns have equal length"),)*
                    });
                }
                chunks
            }

            /// Every value column with its name, in a fixed order (for Arrow / Parquet).
            pub fn named_value_columns(&self) -> Vec<(&'static str, &[f64])> {
                vec![("iv", self.iv.as_slice()), $((stringify!($field), self.$field.as_slice()),)*]
            }
        }

        impl GreekColumnsChunk<'_> {
            #[inline(always)]
            fn write(&mut self, i: usize, iv: f64, greeks: &super::Greeks) {
                self.iv[i] = iv;
                $(self.$field[i] = greeks.$field;)*
            }
        }
    };
}

greek_columns!(
    price, delta, gamma, theta, vega, rho, epsilon, vanna, charm, vomma, veta, speed, zomma, color,
    ultima, dual_delta,
);

/// Implied volatilities of `prices` (dollars, one per row) into `out` (decimal), with the
/// per-row outcome in `status`. Rows that cannot be solved get NaN in `out`.
///
/// # Panics
/// When the columns, `prices`, `out` and `status` differ in length.
pub fn implied_vols_batch(
    chain: &ChainColumns<'_>,
    prices: &[f64],
    out: &mut [f64],
    status: &mut [IvStatus],
) {
    chain.check_lengths(&[prices.len(), out.len(), status.len()]);
    out.par_chunks_mut(CHUNK_ROWS)
        .zip(status.par_chunks_mut(CHUNK_ROWS))
        .enumerate()
        .for_each(|(chunk_index, (out, status))| {
            let offset = chunk_index * CHUNK_ROWS;
            let mut terms = Vec::with_capacity(out.len());
            solve_rows(chain, prices, offset, out, status, &mut terms);
        });
}

/// Solves rows `offset..offset + out.len()` in blocks of [`LANES`]: each row is normalised on
/// its own (a validation failure or a price above the maximum ends it there), the block goes
/// through the common path together (SIMD lanes), and each row is completed on its own. These
/// are exactly the steps `implied_vol` applies to one contract, so the bits agree. Each row's
/// market terms are left in `terms` (cleared first) for the Greeks.
#[inline]
fn solve_rows(
    chain: &ChainColumns<'_>,
    prices: &[f64],
    offset: usize,
    out: &mut [f64],
    status: &mut [IvStatus],
    terms: &mut Vec<MarketTerms>,
) {
    debug_assert_eq!(out.len(), status.len());
    let mut memo = MarketTermsMemo::default();
    terms.clear();
    terms.extend((0..out.len()).map(|j| memo.terms(&chain.row(offset + j))));
    for block_start in (0..out.len()).step_by(LANES) {
        let block_len = LANES.min(out.len() - block_start);
        let mut normalised: [Option<(OptionInputs, Normalised)>; LANES] = [None; LANES];
        // Lanes without a row (the end of the chunk) or whose row already failed carry NaN,
        // which the common path flags and which is then ignored.
        let mut beta = [f64::NAN; LANES];
        let mut theta_x = [f64::NAN; LANES];
        for lane in 0..block_len {
            let j = block_start + lane;
            let row = chain.row(offset + j);
            match normalise_row(&row, &terms[j], prices[offset + j]) {
                Ok(n) => {
                    beta[lane] = n.beta;
                    theta_x[lane] = n.theta_x;
                    normalised[lane] = Some((row, n));
                }
                Err(e) => {
                    out[j] = f64::NAN;
                    status[j] = IvStatus::from_error(&e);
                }
            }
        }
        let outcomes = solve_block(&beta, &theta_x);
        for (lane, (entry, outcome)) in normalised.iter().zip(outcomes).enumerate() {
            let Some((row, n)) = entry else { continue };
            let j = block_start + lane;
            match n.complete(outcome) {
                Ok(s) => {
                    out[j] = s / row.years.sqrt();
                    status[j] = IvStatus::Solved;
                }
                Err(e) => {
                    out[j] = f64::NAN;
                    status[j] = IvStatus::from_error(&e);
                }
            }
        }
    }
}

#[inline(always)]
fn normalise_row(
    inputs: &OptionInputs,
    terms: &MarketTerms,
    price: f64,
) -> Result<Normalised, ImpliedVolError> {
    match inputs.validate() {
        Err(e) => Err(ImpliedVolError::from(e)),
        Ok(()) if !price.is_finite() => Err(ImpliedVolError::InvalidInput(super::InvalidInput {
            field: "price",
            reason: "must be a finite number",
        })),
        Ok(()) => normalise_with(inputs, terms, price),
    }
}

/// Implied volatility from `prices`, then the full Greek set at that volatility, for every row.
///
/// # Panics
/// When the columns and `prices` differ in length.
pub fn implied_vol_and_greeks_batch(chain: &ChainColumns<'_>, prices: &[f64]) -> GreekColumns {
    chain.check_lengths(&[prices.len()]);
    let mut columns = GreekColumns::with_len(chain.len());
    columns
        .chunks_mut(CHUNK_ROWS)
        .into_par_iter()
        .enumerate()
        .for_each(|(chunk_index, mut chunk)| {
            let offset = chunk_index * CHUNK_ROWS;
            let rows = chunk.iv.len();
            let mut terms = Vec::with_capacity(rows);
            solve_rows(
                chain,
                prices,
                offset,
                &mut *chunk.iv,
                &mut *chunk.iv_status,
                &mut terms,
            );
            for (j, row_terms) in terms.iter().enumerate() {
                if chunk.iv_status[j] == IvStatus::Solved {
                    let vol = chunk.iv[j];
                    chunk.write(j, vol, &greeks_with(&chain.row(offset + j), row_terms, vol));
                }
            }
        });
    columns
}

/// Errors of the Arrow entry points.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrowBatchError {
    /// The arrays do not all have the same length.
    #[error("array `{name}` has {len} rows, expected {expected}")]
    LengthMismatch {
        /// Which array.
        name: &'static str,
        /// Its length.
        len: usize,
        /// The length of the strike array.
        expected: usize,
    },
}

/// Arrow view of a chain: `is_call` true for calls; a null in any input makes the row null.
#[derive(Debug, Clone, Copy)]
pub struct ArrowChain<'a> {
    /// Spot (BSM) or forward (Black-76).
    pub model: PricingModel,
    /// True for calls, false for puts.
    pub is_call: &'a BooleanArray,
    /// Spot or forward.
    pub underlying: &'a Float64Array,
    /// Strike.
    pub strike: &'a Float64Array,
    /// Years to expiry.
    pub years: &'a Float64Array,
    /// Continuous rate, decimal.
    pub rate: &'a Float64Array,
    /// Continuous dividend yield, decimal.
    pub dividend_yield: &'a Float64Array,
}

impl ArrowChain<'_> {
    fn check(&self, extra: &[(&'static str, usize)]) -> Result<(), ArrowBatchError> {
        let expected = self.strike.len();
        let arrays = [
            ("is_call", self.is_call.len()),
            ("underlying", self.underlying.len()),
            ("years", self.years.len()),
            ("rate", self.rate.len()),
            ("dividend_yield", self.dividend_yield.len()),
        ];
        for &(name, len) in arrays.iter().chain(extra) {
            if len != expected {
                return Err(ArrowBatchError::LengthMismatch {
                    name,
                    len,
                    expected,
                });
            }
        }
        Ok(())
    }

    fn any_null(&self, i: usize) -> bool {
        self.is_call.is_null(i)
            || self.underlying.is_null(i)
            || self.strike.is_null(i)
            || self.years.is_null(i)
            || self.rate.is_null(i)
            || self.dividend_yield.is_null(i)
    }

    /// The chain's value columns as the batch functions take them (`option_types` from
    /// [`Self::option_types`]; nulls are told apart by [`Self::any_null`]).
    fn columns<'c>(&'c self, option_types: &'c [OptionType]) -> ChainColumns<'c> {
        ChainColumns {
            model: self.model,
            option_type: option_types,
            underlying: self.underlying.values(),
            strike: self.strike.values(),
            years: self.years.values(),
            rate: self.rate.values(),
            dividend_yield: self.dividend_yield.values(),
        }
    }

    fn option_types(&self) -> Vec<OptionType> {
        (0..self.is_call.len())
            .map(|i| {
                if self.is_call.value(i) {
                    OptionType::Call
                } else {
                    OptionType::Put
                }
            })
            .collect()
    }
}

/// Implied volatilities as a Float64Array (null where no volatility exists) and the reason
/// codes as a StringArray (null where solved).
pub fn implied_vol_arrow(
    chain: &ArrowChain<'_>,
    prices: &Float64Array,
) -> Result<(Float64Array, StringArray), ArrowBatchError> {
    chain.check(&[("prices", prices.len())])?;
    let option_types = chain.option_types();
    let columns = chain.columns(&option_types);
    let n = columns.len();
    let mut vols = vec![f64::NAN; n];
    let mut status = vec![IvStatus::Solved; n];
    implied_vols_batch(&columns, prices.values(), &mut vols, &mut status);
    let null_row = |i: usize| chain.any_null(i) || prices.is_null(i);
    let iv: Float64Array = (0..n)
        .map(|i| (!null_row(i) && status[i] == IvStatus::Solved).then_some(vols[i]))
        .collect();
    let reasons: StringArray = (0..n)
        .map(|i| {
            if null_row(i) {
                Some("missing_input")
            } else {
                status[i].code()
            }
        })
        .collect();
    Ok((iv, reasons))
}

/// Named Float64Arrays, one per value column.
pub type NamedArrays = Vec<(&'static str, Float64Array)>;

/// Implied volatility then every Greek, as named Float64Arrays in the order of
/// [`GreekColumns::named_value_columns`] (null where no volatility exists), plus the reason codes.
pub fn greeks_arrow(
    chain: &ArrowChain<'_>,
    prices: &Float64Array,
) -> Result<(NamedArrays, StringArray), ArrowBatchError> {
    chain.check(&[("prices", prices.len())])?;
    let option_types = chain.option_types();
    let columns = chain.columns(&option_types);
    let result = implied_vol_and_greeks_batch(&columns, prices.values());
    let n = result.len();
    let valid: Vec<bool> = (0..n)
        .map(|i| {
            !chain.any_null(i) && !prices.is_null(i) && result.iv_status[i] == IvStatus::Solved
        })
        .collect();
    let arrays = result
        .named_value_columns()
        .into_iter()
        .map(|(name, values)| {
            let array: Float64Array = values
                .iter()
                .zip(&valid)
                .map(|(&v, &ok)| ok.then_some(v))
                .collect();
            (name, array)
        })
        .collect();
    let reasons: StringArray = (0..n)
        .map(|i| {
            if chain.any_null(i) || prices.is_null(i) {
                Some("missing_input")
            } else {
                result.iv_status[i].code()
            }
        })
        .collect();
    Ok((arrays, reasons))
}
