//! The key map in force: [`BINDINGS`] with the `[keys]` of txpace.toml applied, and the key
//! names those use (`"p"`, `"space"`, `"ctrl-c"`, `"pgdn"`, `"f1"`).
//!
//! A key given to an action in txpace.toml is taken away from whatever action had it by
//! default, so `pause = "x"` needs nothing else, and `quit = "x"` frees `q`. One key for two
//! actions in the file is an error, as is an unknown action or key name. The queue digits 1-5
//! and the answers inside the find prompt and the question before quitting are fixed.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::bindings::{Action, BAR, BINDINGS, Key};

/// One action's keys as the dashboard uses and shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub keys: Vec<Key>,
    /// The keys as the help overlay writes them.
    pub label: String,
    pub action: Action,
    pub name: &'static str,
    pub help: &'static str,
    /// The first key as the key bar writes it.
    pub short: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keymap {
    rows: Vec<Row>,
}

/// Why a `[keys]` entry was refused; the caller adds the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    #[error("unknown action {0:?}: the actions are {names}", names = action_names())]
    UnknownAction(String),
    #[error("the queue digits 1-5 cannot be rebound")]
    Fixed,
    #[error(
        "{0:?} is not a key: give a character (\"p\", \"G\", \"/\"), a name (space, enter, esc, tab, backtab, backspace, up, down, left, right, pgup, pgdn, home, end, f1-f12) or ctrl-CHAR"
    )]
    BadKey(String),
    #[error("{action} has no keys: give at least one")]
    NoKeys { action: String },
    #[error("key {key:?} is given to both {first} and {second}")]
    Twice {
        key: String,
        first: &'static str,
        second: &'static str,
    },
}

fn action_names() -> String {
    BINDINGS
        .iter()
        .filter(|b| b.action != Action::JumpQueue)
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            rows: BINDINGS
                .iter()
                .map(|b| Row {
                    keys: b.keys.to_vec(),
                    label: b.label.to_string(),
                    action: b.action,
                    name: b.name,
                    help: b.help,
                    short: b.short.to_string(),
                })
                .collect(),
        }
    }
}

impl Keymap {
    /// The defaults with `overrides` (action name, key names) applied; see the module docs.
    pub fn with_overrides<'a>(
        overrides: impl IntoIterator<Item = (&'a str, &'a [String])>,
    ) -> Result<Keymap, KeymapError> {
        let mut map = Keymap::default();
        let mut given: Vec<(Key, &'static str)> = Vec::new();
        for (name, keys) in overrides {
            let i = map
                .rows
                .iter()
                .position(|r| r.name == name)
                .ok_or_else(|| KeymapError::UnknownAction(name.to_string()))?;
            if map.rows[i].action == Action::JumpQueue {
                return Err(KeymapError::Fixed);
            }
            if keys.is_empty() {
                return Err(KeymapError::NoKeys {
                    action: name.to_string(),
                });
            }
            let parsed = keys
                .iter()
                .map(|k| parse(k).ok_or_else(|| KeymapError::BadKey(k.clone())))
                .collect::<Result<Vec<Key>, _>>()?;
            for (k, text) in parsed.iter().zip(keys) {
                if let Some(&(_, first)) = given.iter().find(|(g, _)| g == k) {
                    return Err(KeymapError::Twice {
                        key: text.clone(),
                        first,
                        second: map.rows[i].name,
                    });
                }
                given.push((*k, map.rows[i].name));
            }
            let row = &mut map.rows[i];
            row.label = parsed
                .iter()
                .map(|k| label(*k))
                .collect::<Vec<_>>()
                .join(", ");
            row.short = label(parsed[0]);
            row.keys = parsed;
        }
        // A key the file gave one action leaves the action that had it by default.
        for row in &mut map.rows {
            let own: Vec<Key> = given
                .iter()
                .filter(|(_, a)| *a == row.name)
                .map(|(k, _)| *k)
                .collect();
            if own.is_empty() {
                row.keys.retain(|k| !given.iter().any(|(g, _)| g == k));
                if row.keys.is_empty() {
                    row.label = "(none)".into();
                    row.short = String::new();
                }
            }
        }
        Ok(map)
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The row a key press triggers; releases are ignored.
    pub fn lookup(&self, ev: &KeyEvent) -> Option<&Row> {
        if ev.kind == KeyEventKind::Release {
            return None;
        }
        self.rows
            .iter()
            .find(|r| r.keys.iter().any(|k| k.matches(ev)))
    }

    /// The key bar's items in display order: (keys, word, priority), the keys taken from the
    /// rows so the bar cannot name a key that does something else.
    pub fn bar_items(&self) -> Vec<(String, &'static str, u8)> {
        BAR.iter()
            .map(|(actions, word, prio)| {
                let keys: Vec<&str> = actions
                    .iter()
                    .filter_map(|a| self.rows.iter().find(|r| r.action == *a))
                    .map(|r| r.short.as_str())
                    .filter(|s| !s.is_empty())
                    .collect();
                (keys.join("/"), *word, *prio)
            })
            .collect()
    }
}

/// Names of keys that are not one character, in txpace.toml and on screen.
const NAMED: &[(&str, KeyCode, &str)] = &[
    ("space", KeyCode::Char(' '), "Space"),
    ("enter", KeyCode::Enter, "Enter"),
    ("esc", KeyCode::Esc, "Esc"),
    ("tab", KeyCode::Tab, "Tab"),
    ("backtab", KeyCode::BackTab, "Shift-Tab"),
    ("backspace", KeyCode::Backspace, "Backspace"),
    ("up", KeyCode::Up, "Up"),
    ("down", KeyCode::Down, "Down"),
    ("left", KeyCode::Left, "Left"),
    ("right", KeyCode::Right, "Right"),
    ("pgup", KeyCode::PageUp, "PgUp"),
    ("pgdn", KeyCode::PageDown, "PgDn"),
    ("home", KeyCode::Home, "Home"),
    ("end", KeyCode::End, "End"),
    ("delete", KeyCode::Delete, "Del"),
    ("insert", KeyCode::Insert, "Ins"),
];

/// A key from its txpace.toml name; names are case-insensitive, single characters are not
/// (`G` is not `g`).
pub fn parse(text: &str) -> Option<Key> {
    let mut chars = text.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return (!c.is_control()).then_some(Key::Code(KeyCode::Char(c)));
    }
    let lower = text.trim().to_ascii_lowercase();
    if let Some(rest) = lower
        .strip_prefix("ctrl-")
        .or_else(|| lower.strip_prefix("c-"))
    {
        let mut cs = rest.chars();
        return match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphanumeric() => Some(Key::Ctrl(c)),
            _ => None,
        };
    }
    let alias = match lower.as_str() {
        "pageup" => "pgup",
        "pagedown" | "pgdown" => "pgdn",
        "return" => "enter",
        "escape" => "esc",
        "shift-tab" => "backtab",
        other => other,
    };
    if let Some((_, code, _)) = NAMED.iter().find(|(n, _, _)| *n == alias) {
        return Some(Key::Code(*code));
    }
    let n: u8 = alias.strip_prefix('f')?.parse().ok()?;
    (1..=12).contains(&n).then_some(Key::Code(KeyCode::F(n)))
}

/// A key as txpace.toml writes it: what [`parse`] reads back.
pub fn name(key: Key) -> String {
    match key {
        Key::Ctrl(c) => format!("ctrl-{c}"),
        Key::Code(KeyCode::Char(c)) if c != ' ' => c.to_string(),
        Key::Code(KeyCode::F(n)) => format!("f{n}"),
        Key::Code(code) => NAMED
            .iter()
            .find(|(_, k, _)| *k == code)
            .map_or_else(|| format!("{code:?}"), |(n, _, _)| n.to_string()),
    }
}

/// A key as the help overlay and key bar write it.
pub fn label(key: Key) -> String {
    match key {
        Key::Ctrl(c) => format!("Ctrl-{}", c.to_ascii_uppercase()),
        Key::Code(code) => match NAMED.iter().find(|(_, k, _)| *k == code) {
            Some((_, _, shown)) => shown.to_string(),
            None => match code {
                KeyCode::Char(c) => c.to_string(),
                KeyCode::F(n) => format!("F{n}"),
                other => format!("{other:?}"),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn keys(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn press(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn key_names_parse_and_print_back() {
        for (text, shown) in [
            ("p", "p"),
            ("G", "G"),
            ("/", "/"),
            ("space", "Space"),
            ("Enter", "Enter"),
            ("ctrl-c", "Ctrl-C"),
            ("C-x", "Ctrl-X"),
            ("PageDown", "PgDn"),
            ("shift-tab", "Shift-Tab"),
            ("f5", "F5"),
        ] {
            let key = parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(label(key), shown);
        }
        // Every default key's name reads back as the same key.
        for b in BINDINGS {
            for k in b.keys {
                assert_eq!(parse(&name(*k)), Some(*k), "{k:?}");
            }
        }
        for bad in ["", "ctrl-", "ctrl-ab", "f13", "f0", "hyper-x", "\u{7}"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_rebound_key_leaves_its_default_action() {
        let map = Keymap::with_overrides([("pause", &keys(&["x", "q"])[..])]).unwrap();
        assert_eq!(map.lookup(&press('x')).unwrap().action, Action::TogglePause);
        assert_eq!(map.lookup(&press('q')).unwrap().action, Action::TogglePause);
        // p is no longer pause; quit lost its only plain key but Ctrl-C still force-quits.
        assert!(map.lookup(&press('p')).is_none());
        let quit = map
            .rows()
            .iter()
            .find(|r| r.action == Action::Quit)
            .unwrap();
        assert_eq!(quit.label, "(none)");
        let pause = map.rows().iter().find(|r| r.name == "pause").unwrap();
        assert_eq!((pause.label.as_str(), pause.short.as_str()), ("x, q", "x"));
        let bar = map.bar_items();
        assert_eq!(bar[0], ("x".to_string(), "pause", 2));
        assert!(bar.iter().any(|(k, w, _)| k.is_empty() && *w == "quit"));
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        let err = |name: &str, list: &[&str]| {
            Keymap::with_overrides([(name, &keys(list)[..])])
                .unwrap_err()
                .to_string()
        };
        assert!(
            err("pasue", &["x"])
                .starts_with("unknown action \"pasue\": the actions are pause, rate_up")
        );
        assert_eq!(
            err("jump_queue", &["x"]),
            "the queue digits 1-5 cannot be rebound"
        );
        assert!(err("pause", &["hyper"]).starts_with("\"hyper\" is not a key"));
        assert_eq!(err("pause", &[]), "pause has no keys: give at least one");
        let twice =
            Keymap::with_overrides([("pause", &keys(&["x"])[..]), ("quit", &keys(&["x"])[..])])
                .unwrap_err();
        assert_eq!(
            twice.to_string(),
            "key \"x\" is given to both pause and quit"
        );
    }

    #[test]
    fn the_default_map_is_the_table() {
        let map = Keymap::default();
        assert_eq!(map.rows().len(), BINDINGS.len());
        assert_eq!(map.lookup(&press('p')).unwrap().action, Action::TogglePause);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(map.lookup(&ctrl_c).unwrap().action, Action::ForceQuit);
    }
}
