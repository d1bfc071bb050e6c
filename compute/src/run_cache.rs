//! A value computed once per run of equal keys.

/// The value of the last key asked for, recomputed only when the key changes: for inputs that
/// come in runs (an expiration's contracts, a chain's open-interest date), so that per-run
/// work is done once per run rather than once per item.
#[derive(Debug, Clone)]
pub(crate) struct RunCache<K, V> {
    last: Option<(K, V)>,
}

impl<K, V> Default for RunCache<K, V> {
    fn default() -> Self {
        Self { last: None }
    }
}

impl<K: PartialEq, V: Copy> RunCache<K, V> {
    /// The value for `key`: the held one when `key` equals the last key, else `compute(&key)`
    /// (which is then held).
    pub(crate) fn get(&mut self, key: K, compute: impl FnOnce(&K) -> V) -> V {
        match &self.last {
            Some((held, value)) if *held == key => *value,
            _ => {
                let value = compute(&key);
                self.last = Some((key, value));
                value
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RunCache;
    use std::cell::Cell;

    #[test]
    fn computes_once_per_run_of_equal_keys() {
        let calls = Cell::new(0);
        let mut cache = RunCache::default();
        let square = |k: &u32| {
            calls.set(calls.get() + 1);
            k * k
        };
        let seen: Vec<u32> = [2, 2, 3, 3, 3, 2]
            .into_iter()
            .map(|k| cache.get(k, square))
            .collect();
        assert_eq!(seen, [4, 4, 9, 9, 9, 4]);
        // Three runs (2, 3, 2): the last 2 follows a 3, so it is computed again.
        assert_eq!(calls.get(), 3);
    }
}
