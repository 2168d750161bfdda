//! The test helpers that change how a failure shows: `common::scenarios`, which runs every
//! scenario of a shared setup even after one failed.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::common::scenarios::Scenarios;

#[test]
fn a_failed_scenario_does_not_stop_the_next_and_fails_the_test_naming_it() {
    let mut ran = Vec::new();
    let mut scenarios = Scenarios::new();
    scenarios.run("first", || panic!("the first scenario fails"));
    scenarios.run("second", || ran.push("second"));
    scenarios.run("third", || panic!("the third scenario fails"));
    let failure =
        catch_unwind(AssertUnwindSafe(|| scenarios.finish())).expect_err("finish fails the test");
    assert_eq!(ran, ["second"]);
    let message = failure
        .downcast_ref::<String>()
        .expect("a formatted message");
    assert!(
        message.starts_with("2 of 3 scenarios failed, in order: first, third"),
        "{message}"
    );
}

#[test]
fn scenarios_that_all_pass_pass() {
    let mut scenarios = Scenarios::new();
    scenarios.run("only", || {});
    scenarios.finish();
}
