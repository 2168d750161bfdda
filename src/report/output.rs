//! Where a run's `--report` goes: checked before anything is sent, and kept when the path fails
//! at the end.
//!
//! A report is the run's account; a typo in its path found after an hour of sending loses it.
//! So the file is opened for writing before the first send (a bad path refuses the run, exit 2),
//! and if writing it still fails at the end (the disk filled, the directory was removed), the
//! report goes beside the run's journal — or into txpace's data directory for runs without
//! one — and the message says where.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

/// Makes sure `path` can be written, leaving no trace: a file that is not there yet is created
/// and removed again, so a report that exists is always a finished run's (scripts wait for it).
/// The error names the path and why.
pub fn check_writable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.is_dir() {
        anyhow::bail!(
            "cannot write the report to {}: it is a directory",
            path.display()
        );
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(crate::private_fs::FILE_MODE)
        .open(path)
        .map(drop)
        .with_context(|| format!("cannot write the report to {}", path.display()))?;
    if !existed {
        std::fs::remove_file(path)
            .with_context(|| format!("cannot write the report to {}", path.display()))?;
    }
    Ok(())
}

/// Writes `value` to `path`; when that fails, to a file beside `journal` (or in the data
/// directory's `reports/`), and says so on standard error and in the log. Returns where the
/// report is. Fails only when neither could be written.
pub fn write_or_keep(
    path: &Path,
    value: &impl Serialize,
    journal: Option<&Path>,
) -> anyhow::Result<PathBuf> {
    let err = match super::write_private_json(path, value) {
        Ok(()) => return Ok(path.to_path_buf()),
        Err(e) => e,
    };
    let Some(kept) = fallback_path(path, journal) else {
        return Err(err.context("and there is no data directory to keep it in"));
    };
    match super::write_private_json(&kept, value) {
        Ok(()) => {
            let line = format!(
                "warning: {err:#}; the report was written to {} instead",
                kept.display()
            );
            log::warn!("{line}");
            say!("{line}");
            Ok(kept)
        }
        Err(e) => Err(err.context(format!(
            "and keeping it at {} failed too: {e:#}",
            kept.display()
        ))),
    }
}

/// `JOURNAL.report.json` beside the journal, else `DATA/reports/NAME-SECS.json`.
fn fallback_path(wanted: &Path, journal: Option<&Path>) -> Option<PathBuf> {
    let name = wanted
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report.json".into());
    if let Some(j) = journal {
        let mut file = j.file_name()?.to_os_string();
        file.push(".report.json");
        return Some(j.with_file_name(file));
    }
    let dir = crate::private_fs::data_subdir("reports").ok()??;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    Some(dir.join(format!("{secs}-{}-{name}", std::process::id())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_is_refused_naming_the_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let bad = dir.path().join("nonexistent/r.json");
        let err = format!("{:#}", check_writable(&bad).expect_err("no such directory"));
        assert!(err.contains(&bad.display().to_string()), "{err}");
        assert!(err.contains("No such file or directory"), "{err}");
        assert!(
            check_writable(dir.path()).is_err(),
            "a directory is no report file"
        );
        let good = dir.path().join("r.json");
        check_writable(&good).expect("writable");
        assert!(!good.exists(), "the check leaves no empty report behind");
    }

    #[test]
    fn a_report_that_cannot_be_written_is_kept_beside_the_journal() {
        let dir = tempfile::tempdir().expect("temp dir");
        let journal = dir.path().join("run.journal");
        let gone = dir.path().join("removed/r.json");
        let kept = write_or_keep(&gone, &serde_json::json!({"ok": true}), Some(&journal))
            .expect("kept beside the journal");
        assert_eq!(kept, dir.path().join("run.journal.report.json"));
        let text = std::fs::read_to_string(&kept).expect("kept report");
        assert!(text.contains("\"ok\": true"), "{text}");
    }
}
