//! txpace's own settings file, `txpace.toml` in the user's config directory
//! (`~/.config/txpace/txpace.toml` on Linux): the pace, fan-out, resend interval, commitment,
//! endpoints, dashboard theme, mouse and keys a user wants without typing them each time.
//!
//! ```toml
//! url = "devnet"               # as -u/--url: a URL or a moniker
//! commitment = "finalized"
//!
//! [send]
//! rate = 200                   # tx/s, or "max"
//! fanout = 2
//! resend_interval = "4s"       # slots (10) or a time ("4s", "1500ms")
//! send_timeout = 5
//! catch_up = false             # hold the pace strictly after an outage
//!
//! [dashboard]
//! theme = "light"              # auto | dark | light
//! mouse = false
//!
//! [keys]
//! pause = ["p", "space"]
//! quit = "x"
//! ```
//!
//! Precedence: flags > `TXPACE_*` environment variables > txpace.toml > the Solana CLI's
//! config.yml > defaults ([`apply`]). Every value is checked as the flag taking it is, and a bad
//! one (or an unknown key, a typo that would otherwise be silently ignored) refuses to run with
//! the file, line, column and reason, exit 2.

pub mod apply;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Deserializer, de::Error as _};
use toml::Spanned;

use crate::{
    cli::{MAX_FANOUT, RateArg, ResendInterval, numeric},
    config::Commitment,
    ui::{keymap::Keymap, theme::ThemeName},
};

/// The file's name in the config directory.
pub const FILE_NAME: &str = "txpace.toml";

/// What txpace.toml says; `None` where it says nothing.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// The file these came from; `None` when there is none.
    pub path: Option<PathBuf>,
    pub url: Option<String>,
    pub ws: Option<String>,
    pub commitment: Option<Commitment>,
    pub rate: Option<RateArg>,
    pub fanout: Option<usize>,
    pub resend_interval: Option<ResendInterval>,
    pub send_timeout: Option<f64>,
    pub catch_up: Option<bool>,
    pub theme: Option<ThemeName>,
    pub mouse: Option<bool>,
    /// The `[keys]` entries as written: action name and key names.
    pub keys: Vec<(String, Vec<String>)>,
    /// The default keys with `keys` applied.
    pub keymap: Keymap,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: {reason}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        reason: String,
    },
}

/// Where txpace.toml is looked for: the config directory's, when a home directory is known.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "txpace").map(|d| d.config_dir().join(FILE_NAME))
}

/// Reads `explicit` (`--txpace-config`, `TXPACE_CONFIG`), which must exist, or else the default
/// file when it exists. No file is no settings.
pub fn load(explicit: Option<&Path>) -> Result<Settings, SettingsError> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => match default_path() {
            Some(p) if p.exists() => p,
            _ => return Ok(Settings::default()),
        },
    };
    let text = std::fs::read_to_string(&path).map_err(|source| SettingsError::Read {
        path: path.clone(),
        source,
    })?;
    parse(&text, &path)
}

/// Parses the text of txpace.toml read from `path` (named in errors).
pub fn parse(text: &str, path: &Path) -> Result<Settings, SettingsError> {
    let invalid = |span: Option<std::ops::Range<usize>>, reason: String| {
        let (line, column) = position(text, span.map_or(0, |s| s.start));
        SettingsError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            reason,
        }
    };
    let file: FileFormat =
        toml::from_str(text).map_err(|e| invalid(e.span(), e.message().trim().to_string()))?;
    let keys: Vec<(String, Vec<String>)> = file
        .keys
        .iter()
        .map(|(name, list)| (name.get_ref().clone(), list.get_ref().to_vec()))
        .collect();
    // Entry by entry, so an error points at the entry that caused it.
    let mut keymap = Keymap::default();
    for n in 1..=keys.len() {
        let entries = keys[..n].iter().map(|(a, k)| (a.as_str(), k.as_slice()));
        keymap = Keymap::with_overrides(entries).map_err(|e| {
            let (name, _) = file.keys.iter().nth(n - 1).expect("n ≤ the entries");
            invalid(Some(name.span()), format!("[keys] {e}"))
        })?;
    }
    Ok(Settings {
        path: Some(path.to_path_buf()),
        url: file.url,
        ws: file.ws,
        commitment: file.commitment,
        rate: file.send.rate,
        fanout: file.send.fanout,
        resend_interval: file.send.resend_interval,
        send_timeout: file.send.send_timeout,
        catch_up: file.send.catch_up,
        theme: file.dashboard.theme,
        mouse: file.dashboard.mouse,
        keys,
        keymap,
    })
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    #[serde(default, deserialize_with = "de::url")]
    url: Option<String>,
    #[serde(default, deserialize_with = "de::ws")]
    ws: Option<String>,
    #[serde(default)]
    commitment: Option<Commitment>,
    #[serde(default)]
    send: SendSection,
    #[serde(default)]
    dashboard: DashboardSection,
    #[serde(default)]
    keys: BTreeMap<Spanned<String>, Spanned<OneOrMany>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SendSection {
    #[serde(default, deserialize_with = "de::rate")]
    rate: Option<RateArg>,
    #[serde(default, deserialize_with = "de::fanout")]
    fanout: Option<usize>,
    #[serde(default, deserialize_with = "de::resend_interval")]
    resend_interval: Option<ResendInterval>,
    #[serde(default, deserialize_with = "de::send_timeout")]
    send_timeout: Option<f64>,
    #[serde(default)]
    catch_up: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DashboardSection {
    #[serde(default)]
    theme: Option<ThemeName>,
    #[serde(default)]
    mouse: Option<bool>,
}

/// `quit = "x"` or `pause = ["p", "space"]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(k) => vec![k.clone()],
            OneOrMany::Many(ks) => ks.clone(),
        }
    }
}

/// Each value goes through the parser of the flag that takes it, so the file accepts and refuses
/// exactly what the command line does, with the same words.
mod de {
    use super::*;

    /// A number or a string, as `rate = 200` and `rate = "max"` both read naturally.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Int(i64),
        Float(f64),
        Text(String),
    }

    fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Ok(match Scalar::deserialize(d)? {
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Text(s) => s,
        })
    }

    pub fn url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        let s = String::deserialize(d)?;
        crate::config::normalize_url(&s).map_err(|e| D::Error::custom(format!("{e:#}")))?;
        Ok(Some(s))
    }

    pub fn ws<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        let s = String::deserialize(d)?;
        match url::Url::parse(&s) {
            Ok(u) if matches!(u.scheme(), "ws" | "wss") => Ok(Some(s)),
            _ => Err(D::Error::custom(format!(
                "websocket URL {} must start with ws:// or wss://",
                crate::redact::redact_url(&s)
            ))),
        }
    }

    pub fn rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RateArg>, D::Error> {
        text(d)?.parse().map(Some).map_err(D::Error::custom)
    }

    pub fn resend_interval<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<ResendInterval>, D::Error> {
        text(d)?.parse().map(Some).map_err(D::Error::custom)
    }

    pub fn send_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        numeric::send_timeout(&text(d)?)
            .map(Some)
            .map_err(D::Error::custom)
    }

    pub fn fanout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        let t = text(d)?;
        match t.parse::<usize>() {
            Ok(k) if k <= MAX_FANOUT => Ok(Some(k)),
            _ => Err(D::Error::custom(format!(
                "{t:?} is not a fan-out: give 0 to {MAX_FANOUT} upcoming leaders"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn parse_str(text: &str) -> Result<Settings, String> {
        parse(text, Path::new("/home/u/.config/txpace/txpace.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_full_file_reads() {
        let s = parse_str(
            "url = \"devnet\"\nws = \"wss://x.example/\"\ncommitment = \"finalized\"\n\
             [send]\nrate = 200\nfanout = 2\nresend_interval = \"1500ms\"\nsend_timeout = 2.5\n\
             [dashboard]\ntheme = \"light\"\nmouse = false\n\
             [keys]\npause = [\"x\", \"space\"]\nquit = \"Q\"\n",
        )
        .unwrap();
        assert_eq!(s.url.as_deref(), Some("devnet"));
        assert_eq!(s.commitment, Some(Commitment::Finalized));
        assert_eq!(s.rate, Some(RateArg::Fixed(200.0)));
        assert_eq!(s.fanout, Some(2));
        assert_eq!(s.resend_interval.unwrap().0, Duration::from_millis(1500));
        assert_eq!(s.send_timeout, Some(2.5));
        assert_eq!(s.theme, Some(ThemeName::Light));
        assert_eq!(s.mouse, Some(false));
        let quit = s.keymap.rows().iter().find(|r| r.name == "quit").unwrap();
        assert_eq!(quit.label, "Q");
        assert_eq!(
            parse_str("[send]\nrate = \"max\"\nresend_interval = 5\n")
                .unwrap()
                .rate,
            Some(RateArg::Max)
        );
    }

    #[test]
    fn an_empty_file_says_nothing() {
        let s = parse_str("# nothing yet\n").unwrap();
        assert_eq!(
            (s.url, s.rate, s.theme, s.keys.len()),
            (None, None, None, 0)
        );
    }

    #[test]
    fn errors_name_the_file_line_column_and_reason() {
        let p = "/home/u/.config/txpace/txpace.toml";
        for (text, want) in [
            (
                "[send]\nrate = 0\n",
                format!(
                    "{p}:2:8: \"0\" is not a rate: give transactions per second (at least 1) or `max`"
                ),
            ),
            (
                "[send]\nfanout = 17\n",
                format!("{p}:2:10: \"17\" is not a fan-out: give 0 to 16 upcoming leaders"),
            ),
            (
                "[send]\nresend_interval = \"soon\"\n",
                format!(
                    "{p}:2:19: \"soon\" is not an interval: give slots (`10`) or a time (`4s`, `1500ms`)"
                ),
            ),
            (
                "[send]\nsend_timeout = 9000\n",
                format!("{p}:2:16: \"9000\" is out of range: give 0.05 to 600 seconds"),
            ),
            (
                "url = \"ftp://x\"\n",
                format!("{p}:1:7: RPC URL ftp://x/ must start with http:// or https://"),
            ),
            (
                "[keys]\npause = \"x\"\nquit = \"x\"\n",
                format!("{p}:3:1: [keys] key \"x\" is given to both pause and quit"),
            ),
            (
                "[keys]\npasue = \"x\"\n",
                format!("{p}:2:1: [keys] unknown action \"pasue\": the actions are pause,"),
            ),
        ] {
            let err = parse_str(text).unwrap_err();
            assert!(err.starts_with(&want), "{text:?}:\n got {err}\nwant {want}");
        }
        // toml's own errors and unknown keys: located, never a panic.
        let err = parse_str("[send]\nrat = 5\n").unwrap_err();
        assert!(
            err.starts_with(&format!("{p}:2:1: unknown field `rat`")),
            "{err}"
        );
        let err = parse_str("[dashboard]\ntheme = \"pink\"\n").unwrap_err();
        assert!(
            err.starts_with(&format!("{p}:2:9: unknown variant `pink`")),
            "{err}"
        );
        let err = parse_str("url = \n").unwrap_err();
        assert!(err.starts_with(&format!("{p}:1:")), "{err}");
        let err = parse_str("commitment = 3\n").unwrap_err();
        assert!(err.starts_with(&format!("{p}:1:14:")), "{err}");
    }

    #[test]
    fn a_key_in_a_url_never_reaches_an_error() {
        let err = parse_str("ws = \"https://n.example/S3cretKey/?api-key=S3cretQ\"\n").unwrap_err();
        assert!(!err.contains("S3cret"), "{err}");
    }

    #[test]
    fn an_explicit_file_must_exist_and_a_missing_default_is_none() {
        let err = load(Some(Path::new("/nonexistent/txpace.toml"))).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("reading /nonexistent/txpace.toml: "),
            "{err}"
        );
    }
}
