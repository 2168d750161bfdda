//! Finding `solana-test-validator`.
//!
//! `cargo install` puts it in cargo's bin directory, which is often not on `PATH` in CI shells and
//! fresh containers, so that directory is searched after `PATH`. `$TXPACE_VALIDATOR` wins over
//! both so a developer can point the tests at a particular build; when it is set but wrong that is
//! an error rather than a silent fallback to some other binary.

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

/// Finds the validator from this process's environment.
pub fn locate() -> Result<PathBuf, ValidatorError> {
    locate_in(
        std::env::var_os(VALIDATOR_ENV).as_deref(),
        std::env::var_os("PATH").as_deref(),
        cargo_bin_dir().as_deref(),
    )
}

/// Finds the validator given the three places to look, so the search order is testable without
/// touching the process environment.
pub fn locate_in(
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
            "{VALIDATOR_ENV}={} is not an executable file. {}",
            candidate.display(),
            install_hint()
        )));
    }
    let mut looked = Vec::new();
    if let Some(path_var) = path_var {
        for dir in std::env::split_paths(path_var) {
            if dir.as_os_str().is_empty() {
                continue;
            }
            let candidate = dir.join(VALIDATOR_BIN);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
        looked.push("PATH".to_string());
    }
    if let Some(dir) = cargo_bin {
        let candidate = dir.join(VALIDATOR_BIN);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        looked.push(candidate.display().to_string());
    }
    Err(ValidatorError::NotInstalled(format!(
        "{VALIDATOR_BIN} not found (looked in {}). {}",
        looked.join(" and "),
        install_hint()
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
            locate_in(Some(bin.as_os_str()), Some(&path_var), None).unwrap(),
            bin
        );
        let err = locate_in(Some(OsStr::new("/nonexistent/x")), Some(&path_var), None)
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
            locate_in(None, Some(&empty_path), Some(cargo.path())).unwrap(),
            in_cargo
        );
        let first = fake_binary(on_path.path());
        assert_eq!(
            locate_in(None, Some(&empty_path), Some(cargo.path())).unwrap(),
            first
        );
    }

    #[test]
    fn missing_everywhere_explains_how_to_install() {
        let empty = tempfile::tempdir().unwrap();
        let path_var = join_path_var([empty.path().to_path_buf()]).unwrap();
        let err = locate_in(None, Some(&path_var), Some(empty.path()))
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
        assert!(locate_in(None, None, Some(dir.path())).is_err());
    }
}
