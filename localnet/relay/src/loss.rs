//! Which datagrams a link loses: independently, or in bursts (Gilbert–Elliott).
//!
//! The Gilbert–Elliott channel has a good and a bad state; each datagram first moves the state
//! (good → bad with probability `p`, bad → good with `r`) and is then lost with the state's loss
//! probability (`k` in good, `h` in bad). Bursts are the bad state's runs. From an average loss
//! `L` and a mean burst of `B` datagrams the link uses the simple Gilbert case: `h = 1`, `k = 0`,
//! `r = 1/B` and `p = L·r/(1 − L)`, whose stationary loss `p/(p + r)` is `L` and whose bursts last
//! `1/r = B` datagrams on average. Independent loss is the one-state case (`k = L`, never bad).

use rand::{Rng, rngs::StdRng};

/// Why the loss model dropped a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lost {
    /// An independent loss (or one in the good state).
    Random,
    /// A loss in the bad state: part of a burst.
    Burst,
}

#[derive(Debug, Clone)]
pub struct GilbertElliott {
    /// good → bad, per datagram.
    p: f64,
    /// bad → good, per datagram.
    r: f64,
    /// Loss probability in the good state.
    k: f64,
    /// Loss probability in the bad state.
    h: f64,
    bad: bool,
}

impl GilbertElliott {
    /// Independent losses with probability `loss`.
    pub fn independent(loss: f64) -> Self {
        GilbertElliott {
            p: 0.0,
            r: 1.0,
            k: loss,
            h: 0.0,
            bad: false,
        }
    }

    /// Losses averaging `loss` in bursts of `burst` datagrams on average (`0 < loss < 1`,
    /// `burst ≥ 1`); starts in the bad state with the stationary probability, so a short run
    /// averages `loss` too.
    pub fn bursty(loss: f64, burst: f64, rng: &mut StdRng) -> Self {
        let r = 1.0 / burst;
        let p = loss * r / (1.0 - loss);
        GilbertElliott {
            p,
            r,
            k: 0.0,
            h: 1.0,
            bad: rng.random_bool(loss),
        }
    }

    /// The fate of the next datagram: `Some` when it is lost.
    pub fn next(&mut self, rng: &mut StdRng) -> Option<Lost> {
        let flip = if self.bad { self.r } else { self.p };
        if flip > 0.0 && rng.random::<f64>() < flip {
            self.bad = !self.bad;
        }
        let (chance, cause) = if self.bad {
            (self.h, Lost::Burst)
        } else {
            (self.k, Lost::Random)
        };
        (chance > 0.0 && rng.random::<f64>() < chance).then_some(cause)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// The share lost and the mean length of the runs of consecutive losses.
    fn run(model: &mut GilbertElliott, rng: &mut StdRng, n: usize) -> (f64, f64) {
        let (mut lost, mut runs, mut in_run) = (0usize, 0usize, false);
        for _ in 0..n {
            let gone = model.next(rng).is_some();
            lost += usize::from(gone);
            runs += usize::from(gone && !in_run);
            in_run = gone;
        }
        (lost as f64 / n as f64, lost as f64 / runs.max(1) as f64)
    }

    #[test]
    fn bursty_losses_average_the_loss_in_bursts_of_the_mean_length() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut model = GilbertElliott::bursty(0.05, 4.0, &mut rng);
        let (share, burst) = run(&mut model, &mut rng, 400_000);
        assert!((share - 0.05).abs() < 0.005, "loss {share}");
        assert!((burst - 4.0).abs() < 0.4, "mean burst {burst}");
    }

    #[test]
    fn independent_losses_have_runs_of_about_one() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut model = GilbertElliott::independent(0.05);
        let (share, burst) = run(&mut model, &mut rng, 400_000);
        assert!((share - 0.05).abs() < 0.005, "loss {share}");
        // Runs of independent losses average 1/(1 − L) ≈ 1.05.
        assert!(burst < 1.1, "mean burst {burst}");
    }
}
