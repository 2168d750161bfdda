//! Scenarios that share one expensive setup (a validator, a cluster, one run on it) and run one
//! after another in one test, or separate checks of that one run: each runs to its end even when
//! one before it failed, and the test fails at the end naming every one that failed, so the
//! first failure does not hide the rest. A scenario's own panic message is printed when it
//! happens, as any test's is.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// The scenarios run so far and the ones that failed.
#[must_use = "call `finish` to fail the test when a scenario failed"]
#[derive(Default)]
pub struct Scenarios {
    failed: Vec<String>,
    ran: usize,
}

impl Scenarios {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `scenario`, catching its panic: the scenarios after it still run.
    pub fn run(&mut self, name: &str, scenario: impl FnOnce()) {
        self.ran += 1;
        eprintln!("scenario {name}: started");
        // The state a failed scenario leaves (a validator, files) is what the next one starts
        // from; its own checks say whether that is still fit.
        match catch_unwind(AssertUnwindSafe(scenario)) {
            Ok(()) => eprintln!("scenario {name}: passed"),
            Err(_) => {
                eprintln!("scenario {name}: FAILED (its panic is above)");
                self.failed.push(name.to_string());
            }
        }
    }

    /// Fails the test when any scenario failed, naming them in order.
    pub fn finish(self) {
        assert!(
            self.failed.is_empty(),
            "{} of {} scenarios failed, in order: {} (each one's panic is printed above it)",
            self.failed.len(),
            self.ran,
            self.failed.join(", ")
        );
    }
}
