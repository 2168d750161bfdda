//! Endpoint URLs carrying API keys the way providers put them (a path segment and a query
//! parameter), and the check that no output of txpace ever quotes them.

use std::{
    net::{SocketAddr, TcpListener},
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
};

/// The key in the path; every secret below contains [`MARK`].
pub const PATH_KEY: &str = "PathK3yS3cret";
/// The key in the query.
pub const QUERY_KEY: &str = "QueryK3yS3cret";
/// Common to both keys: absent from a text means neither key is in it.
pub const MARK: &str = "S3cret";

/// `base` (`http://host:port`) with both keys: `http://host:port/PathK3yS3cret/?api-key=…`.
/// A validator serves JSON-RPC and pubsub on any path, so such a URL reaches it unchanged.
pub fn keyed(base: &str) -> String {
    format!(
        "{}/{PATH_KEY}/?api-key={QUERY_KEY}",
        base.trim_end_matches('/')
    )
}

/// What the user is shown instead: scheme, host and port.
pub fn shown(base: &str) -> String {
    format!("{}/***?***", base.trim_end_matches('/'))
}

/// A loopback address nothing listens on (the port was free a moment ago): connecting to it
/// is refused at once.
pub fn refused_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").expect("binding a free port");
    l.local_addr().expect("local addr")
}

pub use super::files_under;

/// Fails naming the place when any key is in `text`.
pub fn assert_no_key(what: &str, text: &str) {
    let hits: Vec<&str> = text.lines().filter(|l| l.contains(MARK)).take(5).collect();
    assert!(
        hits.is_empty(),
        "an API key in {what}:\n{}",
        hits.join("\n")
    );
}

/// No key in `stdout`, `stderr`, nor in any file under `dir` (logs, journals, reports and
/// whatever else the run wrote there). Returns the files checked.
pub fn assert_no_key_anywhere(stdout: &str, stderr: &str, dir: &Path) -> Vec<PathBuf> {
    assert_no_key("stdout", stdout);
    assert_no_key("stderr", stderr);
    let files = files_under(dir);
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        assert_no_key(&f.display().to_string(), &String::from_utf8_lossy(&bytes));
    }
    files
}

/// Logs, journals and reports among `files` are readable by the owner only.
pub fn assert_private(files: &[PathBuf]) {
    for f in files {
        let name = f.to_string_lossy();
        if name.ends_with(".log") || name.ends_with(".jnl") || name.ends_with("report.json") {
            let mode = std::fs::metadata(f).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", f.display());
        }
    }
}
