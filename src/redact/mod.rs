//! Keeping API keys out of everything txpace prints or writes.
//!
//! RPC providers put the key in the user-info (`https://user:KEY@host/`), in the query
//! (`?api-key=KEY`) or in the path (`https://name.provider.example/KEY/`,
//! `https://host/v2/KEY`). [`redact_url`] shows an endpoint as scheme, host and port only, so the
//! user still knows which one it is; [`Scrubber`] removes every spelling of a URL and of its
//! secret parts from free text such as a client's error message or a log record of another crate.
//!
//! The process keeps one [`Scrubber`] of every endpoint it was given ([`register_url`]); the
//! logger and the last-resort error printer pass their text through [`scrub`], so a secret that
//! reaches them by a path nobody thought of is still caught.

mod writer;

pub use writer::ScrubWriter;

use std::{fmt::Display, sync::RwLock};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// What JavaScript's `encodeURIComponent` escapes; with [`NON_ALPHANUMERIC`] (everything but
/// letters and digits) the two spellings a URL quoted inside another URL usually has.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// What replaces a secret.
pub const MASK: &str = "***";

/// User-info parts and whole paths or queries shorter than this are not replaced on their own:
/// replacing every `u` in a message would mangle it, and such a part protects nothing.
const MIN_SECRET: usize = 3;

/// A single path segment or query value is replaced on its own (outside a URL) when it looks
/// like a key rather than a word: at least this long and with a digit or a capital letter, or
/// [`KEY_LIKE_ANY`] long whatever it holds. `v2`, `rpc` or `solana` stay readable in messages;
/// `TOKEN`, a UUID or 32 random characters do not.
const KEY_LIKE_MIN: usize = 5;
const KEY_LIKE_ANY: usize = 16;

/// `input` shown without what may be a secret: scheme, host and port are kept; user-info, path
/// (anything after the first `/`) and query become `***`; a fragment is dropped.
///
/// `https://u:p@rpc.example.com/v2/KEY?api-key=K` → `https://***@rpc.example.com/***?***`.
pub fn redact_url(input: &str) -> String {
    let Ok(url) = url::Url::parse(input) else {
        return redact_unparsed(input);
    };
    let mut out = format!("{}://", url.scheme());
    if !url.username().is_empty() || url.password().is_some() {
        out.push_str(MASK);
        out.push('@');
    }
    if let Some(host) = url.host_str() {
        out.push_str(host);
    }
    if let Some(port) = url.port() {
        out.push_str(&format!(":{port}"));
    }
    out.push('/');
    if !url.path().trim_start_matches('/').is_empty() {
        out.push_str(MASK);
    }
    if url.query().is_some() {
        out.push('?');
        out.push_str(MASK);
    }
    out
}

/// Something that is not a URL: keep what reads as `scheme://host[:port]` (without any
/// user-info) and mask the rest; without a scheme, keep what precedes the first `/`, `?` or `@`.
fn redact_unparsed(input: &str) -> String {
    let (scheme, rest) = match input.find("://") {
        Some(i) => (&input[..i + 3], &input[i + 3..]),
        None => ("", input),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let (had_user, host) = match authority.rfind('@') {
        Some(i) => (true, &authority[i + 1..]),
        None => (false, authority),
    };
    let mut out = scheme.to_string();
    if had_user {
        out.push_str(MASK);
        out.push('@');
    }
    out.push_str(host);
    if end < rest.len() {
        out.push_str(MASK);
    }
    out
}

/// Whether a lone path segment or query value is treated as a key (see [`KEY_LIKE_MIN`]).
fn looks_like_key(s: &str) -> bool {
    s.len() >= KEY_LIKE_ANY
        || (s.len() >= KEY_LIKE_MIN
            && s.chars()
                .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase()))
}

/// Removes every known spelling of some URLs and of their secret parts from text.
///
/// For each URL it knows the spellings a client may quote (as given, normalized by the `url`
/// crate as reqwest prints it, without the user-info that went into an `Authorization` header,
/// percent-encoded inside another URL) and replaces them with the redacted form; then the secret
/// parts on their own (user, password, query, path, key-like segments and values, raw,
/// percent-decoded and percent-encoded) with `***`.
#[derive(Debug, Default, Clone)]
pub struct Scrubber {
    /// (from, to), longest `from` first, so a whole URL is replaced before its parts.
    replacements: Vec<(String, String)>,
}

impl Scrubber {
    /// A scrubber that knows nothing.
    pub const fn empty() -> Self {
        Scrubber {
            replacements: Vec::new(),
        }
    }

    /// A scrubber for one URL.
    pub fn new(url: &str) -> Self {
        let mut s = Self::empty();
        s.add_url(url);
        s
    }

    /// Learns `url`: its spellings and its secret parts.
    pub fn add_url(&mut self, url: &str) {
        let shown = redact_url(url);
        let mut spellings = vec![url.trim().to_string()];
        let mut parts: Vec<String> = Vec::new();
        if let Ok(parsed) = url::Url::parse(url.trim()) {
            let secret = !parsed.username().is_empty()
                || parsed.password().is_some()
                || parsed.query().is_some()
                || parsed.fragment().is_some()
                || !parsed.path().trim_start_matches('/').is_empty();
            if !secret {
                // Nothing to hide; replacing `http://h:1` by `http://h:1/` would only mangle.
                return;
            }
            spellings.push(parsed.to_string());
            let mut bare = parsed.clone();
            let _ = bare.set_username("");
            let _ = bare.set_password(None);
            spellings.push(bare.to_string());
            let mut no_query = bare.clone();
            no_query.set_query(None);
            no_query.set_fragment(None);
            if no_query.path() != "/" {
                spellings.push(no_query.to_string());
            }
            for part in [parsed.username(), parsed.password().unwrap_or_default()] {
                if part.len() >= MIN_SECRET {
                    parts.push(part.to_string());
                }
            }
            if let Some(q) = parsed.query().filter(|q| q.len() >= MIN_SECRET) {
                parts.push(q.to_string());
                for pair in q.split('&') {
                    let value = pair.split_once('=').map_or(pair, |(_, v)| v);
                    if looks_like_key(value) {
                        parts.push(value.to_string());
                    }
                }
            }
            let path = parsed.path();
            if path.trim_start_matches('/').len() >= MIN_SECRET {
                // A request line quotes the path alone (`GET /KEY/ HTTP/1.1`).
                self.push(path.to_string(), format!("/{MASK}"));
                parts.push(path.trim_matches('/').to_string());
                parts.extend(
                    path.split('/')
                        .filter(|s| looks_like_key(s))
                        .map(str::to_string),
                );
            }
            if let Some(f) = parsed.fragment().filter(|f| f.len() >= MIN_SECRET) {
                parts.push(f.to_string());
            }
        }
        spellings.retain(|s| !s.is_empty() && *s != shown);
        spellings.sort();
        spellings.dedup();
        for s in spellings {
            for set in [NON_ALPHANUMERIC, URI_COMPONENT] {
                let encoded = utf8_percent_encode(&s, set).to_string();
                self.push(encoded, MASK.to_string());
            }
            self.push(s, shown.clone());
        }
        for p in parts {
            for variant in variants(&p) {
                self.push(variant, MASK.to_string());
            }
        }
        self.replacements
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        self.replacements.dedup_by(|a, b| a.0 == b.0);
    }

    fn push(&mut self, from: String, to: String) {
        if from.len() >= MIN_SECRET && from != to {
            self.replacements.push((from, to));
        }
    }

    /// Whether it knows no secret at all (every URL it learnt was bare).
    pub fn is_empty(&self) -> bool {
        self.replacements.is_empty()
    }

    /// `e`'s text with every spelling of the URLs and their secret parts redacted.
    pub fn text(&self, e: impl Display) -> String {
        self.owned(e.to_string())
    }

    /// `msg` redacted in place of a copy: a whole report's text is megabytes (a million
    /// transactions' is a gigabyte), and formatting it again doubled its peak.
    pub fn owned(&self, mut msg: String) -> String {
        for (from, to) in &self.replacements {
            if msg.contains(from.as_str()) {
                msg = msg.replace(from.as_str(), to);
            }
        }
        msg
    }
}

/// A secret part as it may appear: raw, percent-decoded and percent-encoded.
fn variants(part: &str) -> Vec<String> {
    let decoded = percent_decode_str(part).decode_utf8_lossy().into_owned();
    let mut v = vec![
        part.to_string(),
        utf8_percent_encode(&decoded, NON_ALPHANUMERIC).to_string(),
        utf8_percent_encode(&decoded, URI_COMPONENT).to_string(),
        decoded,
    ];
    v.sort();
    v.dedup();
    v
}

/// Every endpoint this process was given; see [`register_url`].
static KNOWN: RwLock<Scrubber> = RwLock::new(Scrubber::empty());

/// Adds `url` to the process's scrubber, which [`scrub`] applies. Called where URLs enter
/// (resolving the global options), so every output that passes through [`scrub`] is covered.
pub fn register_url(url: &str) {
    let mut known = KNOWN
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    known.add_url(url);
}

/// `text` without any secret of the URLs given to [`register_url`], redacted where it lies
/// (see [`Scrubber::owned`]).
pub fn scrub_owned(text: String) -> String {
    KNOWN
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .owned(text)
}

/// `text` without any secret of the URLs given to [`register_url`].
pub fn scrub(text: impl Display) -> String {
    scrub_owned(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_only_scheme_host_and_port() {
        assert_eq!(
            redact_url("https://user:pass@rpc.example.com/v1?api-key=SECRET"),
            "https://***@rpc.example.com/***?***"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:8899"),
            "http://127.0.0.1:8899/"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:8899/"),
            "http://127.0.0.1:8899/"
        );
        assert_eq!(
            redact_url("https://name.provider.example/TOKEN/"),
            "https://name.provider.example/***"
        );
        assert_eq!(
            redact_url("https://x.example/v2/TOKEN"),
            "https://x.example/***"
        );
        assert_eq!(
            redact_url("wss://x.example:8443/TOKEN?x=1#frag"),
            "wss://x.example:8443/***?***"
        );
        assert_eq!(
            redact_url("https://x.example/?a=b"),
            "https://x.example/?***"
        );
    }

    #[test]
    fn text_that_is_not_a_url_keeps_only_its_host() {
        assert_eq!(redact_url("not a url?key=1"), "not a url***");
        assert_eq!(
            redact_url("http://us er:pw@host name/KEY"),
            "http://***@host name***"
        );
        assert_eq!(redact_url("host/KEY"), "host***");
    }

    #[test]
    fn owned_text_is_redacted_as_a_formatted_one_is() {
        let s = Scrubber::new("https://u:pw1@rpc.example.com/?api-key=SECRET");
        let text = "url (https://rpc.example.com/?api-key=SECRET) and SECRET".to_string();
        assert_eq!(s.owned(text.clone()), s.text(&text));
        assert!(!s.owned(text).contains("SECRET"));
    }

    #[test]
    fn quoted_urls_become_their_redacted_form() {
        let s = Scrubber::new("https://u:pw1@rpc.example.com/?api-key=SECRET");
        assert_eq!(
            s.text("error sending request for url (https://u:pw1@rpc.example.com/?api-key=SECRET)"),
            "error sending request for url (https://***@rpc.example.com/?***)"
        );
        // What reqwest prints: the user-info went into an Authorization header.
        assert_eq!(
            s.text("error sending request for url (https://rpc.example.com/?api-key=SECRET)"),
            "error sending request for url (https://***@rpc.example.com/?***)"
        );
    }

    #[test]
    fn user_info_and_query_are_caught_in_pieces() {
        let s = Scrubber::new("http://alice:PASSWORD@127.0.0.1:8899/?api-key=KEY");
        assert_eq!(
            s.text("bad auth alice:PASSWORD; query api-key=KEY"),
            "bad auth ***:***; query ***"
        );
    }

    #[test]
    fn a_path_key_is_caught_quoted_whole_alone_and_re_encoded() {
        let url = "https://name.provider.example/v2/Tok3n-abc/";
        let s = Scrubber::new(url);
        assert_eq!(
            s.text(format!("error sending request for url ({url})")),
            "error sending request for url (https://name.provider.example/***)"
        );
        // The same URL normalized differently (explicit default port, no trailing slash).
        assert_eq!(
            s.text("GET https://name.provider.example:443/v2/Tok3n-abc failed"),
            "GET https://name.provider.example:443/*** failed"
        );
        assert_eq!(s.text("unknown key Tok3n-abc"), "unknown key ***");
        assert_eq!(
            s.text("redirect to https%3A%2F%2Fname.provider.example%2Fv2%2FTok3n-abc%2F"),
            "redirect to ***"
        );
        assert_eq!(
            s.text("key=Tok3n%2Dabc"),
            "key=***",
            "a percent-encoded key"
        );
        // Words in the path are not keys: they stay readable elsewhere in a message.
        assert_eq!(s.text("v2 api"), "v2 api");
    }

    #[test]
    fn a_path_key_with_characters_that_get_escaped_is_caught_both_ways() {
        let s = Scrubber::new("https://h.example/KEY%7Cpart");
        assert_eq!(s.text("KEY|part"), "***");
        assert_eq!(s.text("KEY%7Cpart"), "***");
        assert_eq!(s.text("KEY%7Cpart tail"), "*** tail");
    }

    #[test]
    fn query_values_that_look_like_keys_are_caught_alone() {
        let s = Scrubber::new("https://h.example/?api-key=0c7d9e2a&cluster=devnet");
        assert_eq!(
            s.text("header x-api-key: 0c7d9e2a"),
            "header x-api-key: ***"
        );
        assert_eq!(s.text("cluster devnet"), "cluster devnet");
    }

    #[test]
    fn a_bare_url_has_nothing_to_scrub() {
        let s = Scrubber::new("http://127.0.0.1:8899");
        assert!(
            s.text("connect to http://127.0.0.1:8899/ refused")
                == "connect to http://127.0.0.1:8899/ refused"
        );
        assert!(Scrubber::new("https://api.devnet.solana.com").is_empty());
    }

    #[test]
    fn one_scrubber_covers_several_urls() {
        let mut s = Scrubber::new("https://h.example/RpcKey12345");
        s.add_url("wss://h.example/WsKey67890");
        assert_eq!(
            s.text("rpc https://h.example/RpcKey12345 ws wss://h.example/WsKey67890"),
            "rpc https://h.example/*** ws wss://h.example/***"
        );
    }

    #[test]
    fn the_process_scrubber_knows_every_registered_url() {
        register_url("https://registered.example/Regist3redKey/");
        assert_eq!(scrub("id Regist3redKey"), "id ***");
        assert_eq!(scrub("nothing secret"), "nothing secret");
    }
}
