//! Solana JSON keypair files: read with errors that name the file and a warning when others can
//! read the secret key, written readable by the owner only.

use std::{fs, path::Path};

use anyhow::{Context, Result, anyhow, bail};
use solana_keypair::{Keypair, read_keypair_file, write_keypair_file};

/// Reads a Solana JSON keypair file, naming the file in errors and warning when others can read
/// the secret key.
pub fn read_keypair(path: &Path) -> Result<Keypair> {
    if !path.exists() {
        bail!(
            "keypair file {} does not exist (pass --keypair, or create one with `solana-keygen new`)",
            path.display()
        );
    }
    let kp =
        read_keypair_file(path).map_err(|e| anyhow!("reading keypair {}: {e}", path.display()))?;
    warn_if_exposed(path);
    Ok(kp)
}

fn warn_if_exposed(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o044 != 0 {
            say!(
                "warning: keypair {} is readable by group or others (mode {mode:03o}); \
                 run `chmod 600 {}`",
                path.display(),
                path.display()
            );
        }
    }
}

/// Writes a Solana JSON keypair file readable only by its owner.
pub fn write_private_keypair(kp: &Keypair, path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    write_keypair_file(kp, path).map_err(|e| anyhow!("writing keypair {}: {e}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .with_context(|| format!("setting mode 0600 on {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_keypair_names_the_file() {
        let err = read_keypair(Path::new("/nonexistent/id.json"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "keypair file /nonexistent/id.json does not exist (pass --keypair, or create one with `solana-keygen new`)"
        );
    }
}
