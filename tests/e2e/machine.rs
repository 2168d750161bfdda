//! How many end-to-end tests run at once. libtest runs a binary's tests on as many threads as
//! the machine has cores, and each of these tests starts validators (or a whole cluster), so the
//! harness decides instead: two tests that take a [`share`] each may run side by side (each
//! starts one validator, as the tests of one file did when every file was its own binary), and
//! a test that takes the [`whole`] machine runs alone (it starts several validators, or measures
//! timings that a second validator on a 2-core machine would distort).
//!
//! Every test of this harness takes one or the other first; `every_test_takes_the_machine`
//! checks that.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Shares of the machine: two tests of one validator each.
const SHARES: usize = 2;

struct Machine {
    /// Shares not taken.
    free: usize,
    /// Tests waiting for the whole machine; while one waits, no new share is handed out, so it
    /// is not overtaken for the rest of the run.
    whole_waiting: usize,
}

static MACHINE: Mutex<Machine> = Mutex::new(Machine {
    free: SHARES,
    whole_waiting: 0,
});
static RELEASED: Condvar = Condvar::new();

/// The shares a test holds, given back when it ends (also when it panics).
#[must_use = "the test holds the machine until this is dropped"]
pub struct Held(usize);

impl Drop for Held {
    fn drop(&mut self) {
        lock().free += self.0;
        RELEASED.notify_all();
    }
}

fn lock() -> MutexGuard<'static, Machine> {
    // A panic never happens while the lock is held: the counters stay consistent.
    MACHINE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn wait(m: MutexGuard<'static, Machine>) -> MutexGuard<'static, Machine> {
    RELEASED.wait(m).unwrap_or_else(PoisonError::into_inner)
}

/// One share: for a test that runs one validator (or none) and tolerates one more test beside
/// it.
pub fn share() -> Held {
    let mut m = lock();
    while m.free == 0 || m.whole_waiting > 0 {
        m = wait(m);
    }
    m.free -= 1;
    Held(1)
}

/// The whole machine: for a test that starts several validators, or whose timings a second
/// test beside it would distort.
pub fn whole() -> Held {
    let mut m = lock();
    m.whole_waiting += 1;
    while m.free < SHARES {
        m = wait(m);
    }
    m.whole_waiting -= 1;
    m.free -= SHARES;
    Held(SHARES)
}
