//! The one table of keys. The key handler, the help overlay and the key bar all read
//! [`BINDINGS`], so what the screen says a key does is what it does.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks the dashboard to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    TogglePause,
    RateUp,
    RateDown,
    NextQueue,
    PrevQueue,
    /// Jump to a queue by its number; the index comes from the digit pressed.
    JumpQueue,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Details,
    Close,
    Help,
    Quit,
}

/// A key as written in the table: plain keys match whatever Shift says (terminals disagree on
/// whether `+` carries Shift), Ctrl keys need Ctrl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Code(KeyCode),
    Ctrl(char),
}

const fn ch(c: char) -> Key {
    Key::Code(KeyCode::Char(c))
}

/// One row of the key map.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub keys: &'static [Key],
    /// The keys as the help overlay writes them.
    pub label: &'static str,
    pub action: Action,
    /// The help overlay's description.
    pub help: &'static str,
    /// The first key as the key bar writes it.
    pub short: &'static str,
}

pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[ch('p'), ch(' ')],
        label: "p, Space",
        action: Action::TogglePause,
        help: "pause / resume sending (confirmation tracking continues)",
        short: "p",
    },
    Binding {
        keys: &[ch('+'), ch('=')],
        label: "+",
        action: Action::RateUp,
        help: "raise the target pace by 10% (from the current pace under --rate max)",
        short: "+",
    },
    Binding {
        keys: &[ch('-'), ch('_')],
        label: "-",
        action: Action::RateDown,
        help: "lower the target pace by 10% (at least 1 tx/s)",
        short: "-",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Tab)],
        label: "Tab",
        action: Action::NextQueue,
        help: "next queue",
        short: "Tab",
    },
    Binding {
        keys: &[Key::Code(KeyCode::BackTab)],
        label: "Shift-Tab",
        action: Action::PrevQueue,
        help: "previous queue",
        short: "S-Tab",
    },
    Binding {
        keys: &[ch('1'), ch('2'), ch('3'), ch('4'), ch('5')],
        label: "1-5",
        action: Action::JumpQueue,
        help: "Pending, Resent, Confirmed, Failed, Expired",
        short: "1-5",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Up), ch('k')],
        label: "Up, k",
        action: Action::Up,
        help: "select the previous row (scroll the detail view)",
        short: "↑",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Down), ch('j')],
        label: "Down, j",
        action: Action::Down,
        help: "select the next row (scroll the detail view)",
        short: "↓",
    },
    Binding {
        keys: &[Key::Code(KeyCode::PageUp)],
        label: "PgUp",
        action: Action::PageUp,
        help: "one page up",
        short: "PgUp",
    },
    Binding {
        keys: &[Key::Code(KeyCode::PageDown)],
        label: "PgDn",
        action: Action::PageDown,
        help: "one page down",
        short: "PgDn",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Home), ch('g')],
        label: "Home, g",
        action: Action::Home,
        help: "first row",
        short: "Home",
    },
    Binding {
        keys: &[Key::Code(KeyCode::End), ch('G')],
        label: "End, G",
        action: Action::End,
        help: "last row",
        short: "End",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Enter)],
        label: "Enter",
        action: Action::Details,
        help: "details of the selected transaction: every send, status history, error",
        short: "Enter",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Esc)],
        label: "Esc",
        action: Action::Close,
        help: "close the overlay",
        short: "Esc",
    },
    Binding {
        keys: &[ch('?')],
        label: "?",
        action: Action::Help,
        help: "this help",
        short: "?",
    },
    Binding {
        keys: &[ch('q'), Key::Ctrl('c')],
        label: "q, Ctrl-C",
        action: Action::Quit,
        help: "stop the run and quit",
        short: "q",
    },
];

/// The key bar, in display order: the actions whose keys one item shows, its word, and its
/// priority on a narrow terminal (lower stays longer; quitting and help never go).
pub const BAR: &[(&[Action], &str, u8)] = &[
    (&[Action::TogglePause], "pause", 2),
    (&[Action::RateUp, Action::RateDown], "rate", 3),
    (&[Action::NextQueue, Action::JumpQueue], "queue", 5),
    (&[Action::Up, Action::Down], "select", 6),
    (&[Action::Details], "details", 4),
    (&[Action::Help], "help", 1),
    (&[Action::Quit], "quit", 0),
];

impl Key {
    fn matches(self, ev: &KeyEvent) -> bool {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let alt = ev.modifiers.contains(KeyModifiers::ALT);
        match self {
            Key::Ctrl(c) => ctrl && ev.code == KeyCode::Char(c),
            Key::Code(code) => !ctrl && !alt && ev.code == code,
        }
    }
}

/// The binding a key press triggers; releases and repeats-as-release are ignored.
pub fn lookup(ev: &KeyEvent) -> Option<&'static Binding> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    BINDINGS
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(ev)))
}

/// The bar's items in display order: (keys, word, priority), the keys taken from the
/// bindings so the bar cannot name a key that does something else.
pub fn bar_items() -> Vec<(String, &'static str, u8)> {
    BAR.iter()
        .map(|(actions, word, prio)| {
            let keys: Vec<&str> = actions
                .iter()
                .filter_map(|a| BINDINGS.iter().find(|b| b.action == *a).map(|b| b.short))
                .collect();
            (keys.join("/"), *word, *prio)
        })
        .collect()
}
