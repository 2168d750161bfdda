//! Commands a UI (or the headless driver) sends to a running engine.

use super::snapshot::RateTarget;

/// A request to the engine; it answers by publishing a new snapshot.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Stop sending; confirmation and expiry tracking continue.
    Pause,
    Resume,
    /// Pause when running, resume when paused.
    TogglePause,
    /// Change the pace. A fixed rate below 1 tx/s is raised to 1.
    SetRate(RateTarget),
    /// Stop sending and tracking, publish a final snapshot and end the engine task.
    Stop,
}

/// The next target when the user presses `+` or `-`: 10% up or down, rounded to whole tx/s,
/// at least 1 tx/s and always moving by at least 1 (so 5 → 6, 50 → 55, 1 stays 1 on `-`).
pub fn step_rate(current: f64, up: bool) -> f64 {
    let step = (current * 0.1).round().max(1.0);
    let next = if up { current + step } else { current - step };
    next.round().max(1.0)
}

#[cfg(test)]
mod tests {
    use super::step_rate;

    #[test]
    fn ten_percent_steps() {
        assert_eq!(step_rate(50.0, true), 55.0);
        assert_eq!(step_rate(55.0, false), 49.0);
        assert_eq!(step_rate(100.0, false), 90.0);
        assert_eq!(step_rate(5.0, true), 6.0);
        assert_eq!(step_rate(1.0, false), 1.0);
        assert_eq!(step_rate(2.0, false), 1.0);
    }
}
