//! The harness's file chores: a self-removing temporary directory, keypair and directory
//! creation with errors that name the path, and the tail of a log for startup errors.

use std::{
    fs::File,
    io::{Read, Seek, SeekFrom},
    path::{Path, PathBuf},
};

use solana_keypair::{Keypair, read_keypair_file};

use super::ValidatorError;

pub(super) fn create_dir(dir: &Path) -> Result<(), ValidatorError> {
    std::fs::create_dir_all(dir).map_err(|source| ValidatorError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

pub(super) fn read_keypair(path: &Path) -> Result<Keypair, ValidatorError> {
    read_keypair_file(path).map_err(|e| ValidatorError::Keypair {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// The last `n` lines of a file, reading at most its last 64 KiB (logs grow large).
pub(super) fn tail_lines(path: &Path, n: usize) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(64 * 1024);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    Ok(lines[lines.len().saturating_sub(n)..].join("\n"))
}

/// A directory removed on drop. (`tempfile` is only a dev-dependency, and the harness is library
/// code used by `txpace demo`.)
#[derive(Debug)]
pub(super) struct TempDir(PathBuf);

impl TempDir {
    pub(super) fn new(prefix: &str) -> Result<Self, ValidatorError> {
        use std::hash::{BuildHasher, RandomState};
        let random = RandomState::new();
        let base = std::env::temp_dir();
        for attempt in 0..16u32 {
            let tag = random.hash_one((attempt, std::process::id()));
            let path = base.join(format!("{prefix}-{tag:016x}"));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(ValidatorError::Io { path, source }),
            }
        }
        Err(ValidatorError::Io {
            path: base,
            source: std::io::Error::other("16 random directory names were all taken"),
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.0
    }
}

/// Copies `file` beside the temporary directory `dir`, as `{dir}.{name}`, so an error can name a
/// log that outlives the directory (removed when its owner is dropped, which a failed start
/// is); the original path when the copy fails.
pub(super) fn keep_beside(dir: &TempDir, file: &Path, name: &str) -> PathBuf {
    let kept = dir.path().with_extension(name);
    match std::fs::copy(file, &kept) {
        Ok(_) => kept,
        Err(_) => file.to_path_buf(),
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, text).unwrap();
        assert_eq!(tail_lines(&path, 3).unwrap(), "line 98\nline 99\nline 100");
        assert!(tail_lines(&dir.path().join("missing"), 3).is_err());
    }

    #[test]
    fn a_kept_file_outlives_its_directory() {
        let t = TempDir::new("txpace-test").unwrap();
        let log = t.path().join("log");
        std::fs::write(&log, "the reason").unwrap();
        let kept = keep_beside(&t, &log, "log");
        assert_eq!(kept, t.path().with_extension("log"));
        drop(t);
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "the reason");
        std::fs::remove_file(kept).unwrap();
    }

    #[test]
    fn temp_dir_is_removed_on_drop() {
        let path = {
            let t = TempDir::new("txpace-test").unwrap();
            std::fs::write(t.path().join("f"), "x").unwrap();
            t.path().to_path_buf()
        };
        assert!(!path.exists());
    }
}
