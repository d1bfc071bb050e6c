//! Nelder–Mead minimisation for the small unconstrained problems of the volatility fits
//! (GARCH's four transformed parameters, SVI's two outer ones).
//!
//! The standard method with the usual coefficients (reflection 1, expansion 2, contraction ½,
//! shrink ½; Lagarias, Reeds, Wright and Wright 1998). It stops when the simplex has collapsed:
//! every vertex within `x_tolerance` of the best in every coordinate **and** every value within
//! `f_tolerance` of the best — or when `max_evaluations` is spent, which the result reports as
//! not converged. A non-finite objective value counts as +∞, so a caller can reject a region by
//! returning NaN or ∞.

/// Stopping rule and budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NelderMeadOptions {
    /// Largest coordinate spread of the simplex at convergence.
    pub x_tolerance: f64,
    /// Largest spread of objective values at convergence.
    pub f_tolerance: f64,
    /// Objective evaluations allowed.
    pub max_evaluations: usize,
}

/// Where the search stopped.
#[derive(Debug, Clone)]
pub(crate) struct Minimum {
    /// The best vertex.
    pub x: Vec<f64>,
    /// The objective there.
    pub value: f64,
    /// Whether the stopping rule (not the budget) ended the search.
    pub converged: bool,
}

/// Minimises `f` from `start`, with an initial simplex of `start` and `start + stepᵢ·eᵢ`.
pub(crate) fn nelder_mead(
    mut f: impl FnMut(&[f64]) -> f64,
    start: &[f64],
    step: &[f64],
    options: NelderMeadOptions,
) -> Minimum {
    let n = start.len();
    let mut eval = |x: &[f64]| {
        let v = f(x);
        if v.is_finite() { v } else { f64::INFINITY }
    };
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    simplex.push((start.to_vec(), eval(start)));
    for i in 0..n {
        let mut x = start.to_vec();
        x[i] += step[i];
        let v = eval(&x);
        simplex.push((x, v));
    }
    let mut evaluations = n + 1;
    loop {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let best = simplex[0].1;
        let spread_f = simplex
            .iter()
            .map(|v| (v.1 - best).abs())
            .fold(0.0, f64::max);
        let spread_x = simplex[1..]
            .iter()
            .flat_map(|v| v.0.iter().zip(&simplex[0].0).map(|(a, b)| (a - b).abs()))
            .fold(0.0, f64::max);
        if spread_f <= options.f_tolerance && spread_x <= options.x_tolerance && best.is_finite() {
            return Minimum {
                x: simplex[0].0.clone(),
                value: best,
                converged: true,
            };
        }
        if evaluations >= options.max_evaluations {
            return Minimum {
                x: simplex[0].0.clone(),
                value: best,
                converged: false,
            };
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|v| v.0[j]).sum::<f64>() / n as f64)
            .collect();
        let worst = simplex[n].clone();
        let towards = |t: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&worst.0)
                .map(|(c, w)| c + t * (c - w))
                .collect()
        };
        let reflected = towards(1.0);
        let f_reflected = eval(&reflected);
        evaluations += 1;
        if f_reflected < simplex[0].1 {
            let expanded = towards(2.0);
            let f_expanded = eval(&expanded);
            evaluations += 1;
            simplex[n] = if f_expanded < f_reflected {
                (expanded, f_expanded)
            } else {
                (reflected, f_reflected)
            };
            continue;
        }
        if f_reflected < simplex[n - 1].1 {
            simplex[n] = (reflected, f_reflected);
            continue;
        }
        // Contract outside (towards the reflected point) or inside (towards the worst).
        let (contracted, limit) = if f_reflected < worst.1 {
            (towards(0.5), f_reflected)
        } else {
            (towards(-0.5), worst.1)
        };
        let f_contracted = eval(&contracted);
        evaluations += 1;
        if f_contracted < limit {
            simplex[n] = (contracted, f_contracted);
            continue;
        }
        // Shrink every vertex towards the best.
        let best_x = simplex[0].0.clone();
        for vertex in simplex.iter_mut().skip(1) {
            let x: Vec<f64> = best_x
                .iter()
                .zip(&vertex.0)
                .map(|(b, v)| b + 0.5 * (v - b))
                .collect();
            let v = eval(&x);
            *vertex = (x, v);
        }
        evaluations += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_rosenbrock_minimum() {
        let rosenbrock = |x: &[f64]| 100.0 * (x[1] - x[0] * x[0]).powi(2) + (1.0 - x[0]).powi(2);
        let found = nelder_mead(
            rosenbrock,
            &[-1.2, 1.0],
            &[0.1, 0.1],
            NelderMeadOptions {
                x_tolerance: 1e-10,
                f_tolerance: 1e-14,
                max_evaluations: 10_000,
            },
        );
        assert!(found.converged);
        assert!((found.x[0] - 1.0).abs() < 1e-6 && (found.x[1] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn reports_an_exhausted_budget() {
        let found = nelder_mead(
            |x: &[f64]| x[0] * x[0] + x[1] * x[1],
            &[5.0, 5.0],
            &[1.0, 1.0],
            NelderMeadOptions {
                x_tolerance: 1e-12,
                f_tolerance: 1e-14,
                max_evaluations: 10,
            },
        );
        assert!(!found.converged);
    }
}
