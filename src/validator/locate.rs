//! Finding `solana-test-validator` and `txpace-localnet`.
//!
//! `cargo install` puts them in cargo's bin directory, which is often not on `PATH` in CI shells
//! and fresh containers, so that directory is searched after `PATH`. An environment variable
//! (`$TXPACE_VALIDATOR`, `$TXPACE_LOCALNET`) wins over both so a developer can point the tests at
//! a particular build; when it is set but wrong that is an error rather than a silent fallback to
//! some other binary.

use std::{
    ffi::OsStr,
    path::{Path, PathBuf},
};

use super::ValidatorError;

/// Environment variable naming the `solana-test-validator` binary to use.
pub const VALIDATOR_ENV: &str = "TXPACE_VALIDATOR";

/// The binary's file name.
pub const VALIDATOR_BIN: &str = "solana-test-validator";

/// The Agave release the project is tested against.
pub const AGAVE_VERSION: &str = "4.0.0";

/// How to install the validator, shown whenever it cannot be found.
pub fn install_hint() -> String {
    format!(
        "Install it with `scripts/setup.sh` (from the txpace repository), or by hand:\n  \
         sudo apt-get install -y clang libclang-dev protobuf-compiler libudev-dev pkg-config \
         libssl-dev cmake\n  \
         PROTOC=/usr/bin/protoc cargo install agave-validator --version {AGAVE_VERSION} --locked \
         --bin {VALIDATOR_BIN}\n\
         (about 25 minutes on 2 cores, once), or set {VALIDATOR_ENV} to the path of an existing \
         {VALIDATOR_BIN}."
    )
}

/// Environment variable naming the `txpace-localnet` binary to use.
pub const LOCALNET_ENV: &str = "TXPACE_LOCALNET";
/// The several-validator cluster's binary (this repository's `localnet` package).
pub const LOCALNET_BIN: &str = "txpace-localnet";

/// A program the harness starts, and how to get it when it is missing.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    pub bin: &'static str,
    pub env: &'static str,
    pub install_hint: fn() -> String,
}

/// Agave's single test validator.
pub const TEST_VALIDATOR: Program = Program {
    bin: VALIDATOR_BIN,
    env: VALIDATOR_ENV,
    install_hint,
};

/// The cluster of several validators.
pub const LOCALNET: Program = Program {
    bin: LOCALNET_BIN,
    env: LOCALNET_ENV,
    install_hint: localnet_install_hint,
};

/// How to install `txpace-localnet`, shown whenever it cannot be found.
pub fn localnet_install_hint() -> String {
    format!(
        "Install it with `scripts/setup.sh` (from the txpace repository): one build of Agave \
         {AGAVE_VERSION} makes it and `{VALIDATOR_BIN}`, with the flags the cluster needs to keep \
         its ledgers in its directory. Or set {LOCALNET_ENV} to the path of an existing \
         {LOCALNET_BIN}."
    )
}

/// Finds the validator from this process's environment.
pub fn locate() -> Result<PathBuf, ValidatorError> {
    locate_program(&TEST_VALIDATOR)
}

/// Finds `program` from this process's environment.
pub fn locate_program(program: &Program) -> Result<PathBuf, ValidatorError> {
    locate_in(
        program,
        std::env::var_os(program.env).as_deref(),
        std::env::var_os("PATH").as_deref(),
        cargo_bin_dir().as_deref(),
    )
}

/// Finds the validator given the three places to look, so the search order is testable without
/// touching the process environment.
pub fn locate_in(
    program: &Program,
    explicit: Option<&OsStr>,
    path_var: Option<&OsStr>,
    cargo_bin: Option<&Path>,
) -> Result<PathBuf, ValidatorError> {
    if let Some(explicit) = explicit.filter(|s| !s.is_empty()) {
        let candidate = PathBuf::from(explicit);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        return Err(ValidatorError::NotInstalled(format!(
            "{}={} is not an executable file. {}",
            program.env,
            candidate.display(),
            (program.install_hint)()
        )));
    }
    let mut looked = Vec::new();
    if let Some(path_var) = path_var {
        for dir in std::env::split_paths(path_var) {
            if dir.as_os_str().is_empty() {
                continue;
            }
            let candidate = dir.join(program.bin);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
        looked.push("PATH".to_string());
    }
    if let Some(dir) = cargo_bin {
        let candidate = dir.join(program.bin);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        looked.push(candidate.display().to_string());
    }
    Err(ValidatorError::NotInstalled(format!(
        "{} not found (looked in {}). {}",
        program.bin,
        looked.join(" and "),
        (program.install_hint)()
    )))
}

/// `$CARGO_HOME/bin`, else `~/.cargo/bin`.
pub fn cargo_bin_dir() -> Option<PathBuf> {
    match std::env::var_os("CARGO_HOME").filter(|s| !s.is_empty()) {
        Some(home) => Some(PathBuf::from(home).join("bin")),
        None => std::env::var_os("HOME")
            .filter(|s| !s.is_empty())
            .map(|home| PathBuf::from(home).join(".cargo").join("bin")),
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::{ffi::OsString, os::unix::fs::PermissionsExt};

    fn join_path_var<I: IntoIterator<Item = PathBuf>>(dirs: I) -> Option<OsString> {
        std::env::join_paths(dirs).ok()
    }

    fn fake_binary(dir: &Path) -> PathBuf {
        let path = dir.join(VALIDATOR_BIN);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn explicit_path_wins_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let bin = fake_binary(dir.path());
        let path_var = join_path_var([dir.path().to_path_buf()]).unwrap();
        assert_eq!(
            locate_in(
                &TEST_VALIDATOR,
                Some(bin.as_os_str()),
                Some(&path_var),
                None
            )
            .unwrap(),
            bin
        );
        let err = locate_in(
            &TEST_VALIDATOR,
            Some(OsStr::new("/nonexistent/x")),
            Some(&path_var),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("TXPACE_VALIDATOR=/nonexistent/x is not an executable file."),
            "{err}"
        );
        assert!(err.contains("scripts/setup.sh"), "{err}");
    }

    #[test]
    fn path_then_cargo_bin() {
        let on_path = tempfile::tempdir().unwrap();
        let cargo = tempfile::tempdir().unwrap();
        let in_cargo = fake_binary(cargo.path());
        let empty_path = join_path_var([on_path.path().to_path_buf()]).unwrap();
        assert_eq!(
            locate_in(&TEST_VALIDATOR, None, Some(&empty_path), Some(cargo.path())).unwrap(),
            in_cargo
        );
        let first = fake_binary(on_path.path());
        assert_eq!(
            locate_in(&TEST_VALIDATOR, None, Some(&empty_path), Some(cargo.path())).unwrap(),
            first
        );
    }

    #[test]
    fn missing_everywhere_explains_how_to_install() {
        let empty = tempfile::tempdir().unwrap();
        let path_var = join_path_var([empty.path().to_path_buf()]).unwrap();
        let err = locate_in(&TEST_VALIDATOR, None, Some(&path_var), Some(empty.path()))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("solana-test-validator not found (looked in PATH and "));
        assert!(err.contains(
            "cargo install agave-validator --version 4.0.0 --locked --bin solana-test-validator"
        ));
        assert!(err.contains(
            "clang libclang-dev protobuf-compiler libudev-dev pkg-config libssl-dev cmake"
        ));
    }

    #[test]
    fn non_executable_file_is_not_a_validator() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(VALIDATOR_BIN), "").unwrap();
        assert!(locate_in(&TEST_VALIDATOR, None, None, Some(dir.path())).is_err());
    }
}
