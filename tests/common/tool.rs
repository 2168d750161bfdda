//! The external programs some tests run. A missing one fails the test with the package that
//! provides it, instead of letting the test pass without having checked anything.

use std::process::Command;

/// Panics unless `program` can be started (`program args` is run and its exit status ignored),
/// naming the Debian `package` that provides it and `scripts/setup.sh`, which installs it.
pub fn require(program: &str, args: &[&str], package: &str, needed_for: &str) {
    if let Err(e) = Command::new(program).args(args).output() {
        panic!(
            "`{program}` is needed {needed_for} but cannot be run ({e}). Install it with \
             `apt-get install -y {package}`, or run scripts/setup.sh, which installs every tool \
             the tests use."
        );
    }
}
