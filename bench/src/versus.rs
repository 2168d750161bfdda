//! Which Agave contender txpace is compared with: the best one of the run, never the weakest.
//! Each benchmark runs Agave's legacy `TpuClient`, `solana-tpu-client-next` and RPC
//! `sendTransaction` beside txpace (`deploy`: Agave's deployers); every ratio and goal line
//! divides txpace's figure by the best of those it compares with and names which it was (the
//! send benchmark's CPU and memory, and `wan`'s goals, by the TPU clients alone: their modules
//! say why).

/// What decides which contender did best: how its run ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finish {
    pub wall_s: f64,
    pub landed: u64,
    pub total: u64,
    pub failed: bool,
}

impl Finish {
    fn landed_all(&self) -> bool {
        self.landed >= self.total
    }
}

/// The best of `runs`: among those whose process finished, the ones that landed their whole
/// batch first (a client that gave up early has a short wall time that is no achievement), then
/// the lowest wall time. `None` when every run failed: a failed run is compared with nothing.
pub fn best<'a, T>(
    runs: impl IntoIterator<Item = &'a T>,
    finish: impl Fn(&T) -> Finish,
) -> Option<&'a T> {
    runs.into_iter()
        .filter(|r| !finish(r).failed)
        .min_by(|a, b| {
            let (a, b) = (finish(a), finish(b));
            (!a.landed_all())
                .cmp(&!b.landed_all())
                .then(a.wall_s.total_cmp(&b.wall_s))
        })
}

/// txpace's figure over the best contender's, as a ratio line's words: "1.003 (vs Agave
/// tpu-client-next)", or why there is none.
pub fn ratio_words(txpace: f64, txpace_failed: bool, best: Option<(&str, f64)>) -> String {
    match (txpace_failed, best) {
        (true, _) => "none (txpace's run failed)".into(),
        (false, None) => "none (every Agave run failed)".into(),
        (false, Some((name, figure))) => {
            format!("{:.3} (vs {name})", crate::measure::ratio(txpace, figure))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Run {
        name: &'static str,
        finish: Finish,
    }

    fn run(name: &'static str, wall_s: f64, landed: u64, failed: bool) -> Run {
        Run {
            name,
            finish: Finish {
                wall_s,
                landed,
                total: 100,
                failed,
            },
        }
    }

    fn best_name(runs: &[Run]) -> Option<&'static str> {
        best(runs, |r| r.finish).map(|r| r.name)
    }

    #[test]
    fn the_best_is_the_lower_wall_of_those_that_landed_everything() {
        let legacy = run("legacy", 21.0, 100, false);
        let next = run("next", 20.1, 100, false);
        assert_eq!(best_name(&[legacy, next]), Some("next"));
        let legacy = run("legacy", 19.0, 100, false);
        let next = run("next", 20.1, 100, false);
        assert_eq!(best_name(&[legacy, next]), Some("legacy"));
    }

    /// A run that gave up early is not the best for its short wall time; a failed run is never
    /// the best; with every run failed there is no best.
    #[test]
    fn a_short_run_that_lost_transactions_or_failed_is_not_the_best() {
        let legacy = run("legacy", 30.0, 100, false);
        let next = run("next", 12.0, 60, false);
        assert_eq!(best_name(&[legacy, next]), Some("legacy"));
        let legacy = run("legacy", 5.0, 100, true);
        let next = run("next", 20.0, 100, false);
        assert_eq!(best_name(&[legacy, next]), Some("next"));
        // Neither landed everything: the lower wall of the two.
        let legacy = run("legacy", 30.0, 90, false);
        let next = run("next", 25.0, 80, false);
        assert_eq!(best_name(&[legacy, next]), Some("next"));
        let legacy = run("legacy", 30.0, 100, true);
        let next = run("next", 25.0, 100, true);
        assert_eq!(best_name(&[legacy, next]), None);
    }

    #[test]
    fn a_ratio_line_divides_by_the_best_and_names_it() {
        assert_eq!(
            ratio_words(50.4, false, Some(("Agave tpu-client-next", 50.0))),
            "1.008 (vs Agave tpu-client-next)"
        );
        assert_eq!(
            ratio_words(50.4, true, Some(("Agave TpuClient", 50.0))),
            "none (txpace's run failed)"
        );
        assert_eq!(
            ratio_words(50.4, false, None),
            "none (every Agave run failed)"
        );
    }
}
