//! The default table of keys, [`BINDINGS`], and the actions they ask for. The key handler, the
//! help overlay and the key bar all read it through [`super::Keymap`] (this table with
//! txpace.toml's `[keys]` applied), so what the screen says a key does is what it does.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

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
    /// Open the find prompt.
    Find,
    FindNext,
    FindPrev,
    Close,
    Help,
    /// Quit, asking first while transactions are unfinished.
    Quit,
    /// Quit without asking.
    ForceQuit,
}

impl Action {
    /// Steers the run (pause, pace): nothing to steer once the run is over.
    pub fn steers_the_run(self) -> bool {
        matches!(
            self,
            Action::TogglePause | Action::RateUp | Action::RateDown
        )
    }
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
    /// The action's name in txpace.toml's `[keys]` table.
    pub name: &'static str,
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
        name: "pause",
        help: "pause / resume sending (confirmation tracking continues)",
        short: "p",
    },
    Binding {
        keys: &[ch('+'), ch('=')],
        label: "+",
        action: Action::RateUp,
        name: "rate_up",
        help: "raise the target pace by 10% (from the current pace under --rate max)",
        short: "+",
    },
    Binding {
        keys: &[ch('-'), ch('_')],
        label: "-",
        action: Action::RateDown,
        name: "rate_down",
        help: "lower the target pace by 10% (at least 1 tx/s)",
        short: "-",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Tab)],
        label: "Tab",
        action: Action::NextQueue,
        name: "next_queue",
        help: "next queue",
        short: "Tab",
    },
    Binding {
        keys: &[Key::Code(KeyCode::BackTab)],
        label: "Shift-Tab",
        action: Action::PrevQueue,
        name: "prev_queue",
        help: "previous queue",
        short: "S-Tab",
    },
    Binding {
        keys: &[ch('1'), ch('2'), ch('3'), ch('4'), ch('5')],
        label: "1-5",
        action: Action::JumpQueue,
        name: "jump_queue",
        help: "Pending, Resent, Confirmed, Failed, Expired",
        short: "1-5",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Up), ch('k')],
        label: "Up, k",
        action: Action::Up,
        name: "up",
        help: "select the previous row (scroll the detail view)",
        short: "↑",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Down), ch('j')],
        label: "Down, j",
        action: Action::Down,
        name: "down",
        help: "select the next row (scroll the detail view)",
        short: "↓",
    },
    Binding {
        keys: &[Key::Code(KeyCode::PageUp)],
        label: "PgUp",
        action: Action::PageUp,
        name: "page_up",
        help: "one page up",
        short: "PgUp",
    },
    Binding {
        keys: &[Key::Code(KeyCode::PageDown)],
        label: "PgDn",
        action: Action::PageDown,
        name: "page_down",
        help: "one page down",
        short: "PgDn",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Home), ch('g')],
        label: "Home, g",
        action: Action::Home,
        name: "home",
        help: "first row",
        short: "Home",
    },
    Binding {
        keys: &[Key::Code(KeyCode::End), ch('G')],
        label: "End, G",
        action: Action::End,
        name: "end",
        help: "last row",
        short: "End",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Enter)],
        label: "Enter",
        action: Action::Details,
        name: "details",
        help: "details of the selected transaction: every send, status history, error",
        short: "Enter",
    },
    Binding {
        keys: &[ch('/')],
        label: "/",
        action: Action::Find,
        name: "find",
        help: "find a transaction by the start of its signature, in every queue",
        short: "/",
    },
    Binding {
        keys: &[ch('n')],
        label: "n",
        action: Action::FindNext,
        name: "find_next",
        help: "next transaction the last find matches",
        short: "n",
    },
    Binding {
        keys: &[ch('N')],
        label: "N",
        action: Action::FindPrev,
        name: "find_prev",
        help: "previous transaction the last find matches",
        short: "N",
    },
    Binding {
        keys: &[Key::Code(KeyCode::Esc)],
        label: "Esc",
        action: Action::Close,
        name: "close",
        help: "close the overlay",
        short: "Esc",
    },
    Binding {
        keys: &[ch('?')],
        label: "?",
        action: Action::Help,
        name: "help",
        help: "this help",
        short: "?",
    },
    Binding {
        keys: &[ch('q')],
        label: "q",
        action: Action::Quit,
        name: "quit",
        help: "stop the run and quit (asks first while transactions are unfinished)",
        short: "q",
    },
    Binding {
        keys: &[Key::Ctrl('c')],
        label: "Ctrl-C",
        action: Action::ForceQuit,
        name: "force_quit",
        help: "stop the run and quit without asking",
        short: "^C",
    },
];

/// The key bar, in display order: the actions whose keys one item shows, its word, and its
/// priority on a narrow terminal (lower stays longer; quitting and help never go).
pub const BAR: &[(&[Action], &str, u8)] = &[
    (&[Action::TogglePause], "pause", 2),
    (&[Action::RateUp, Action::RateDown], "rate", 3),
    (&[Action::NextQueue, Action::JumpQueue], "queue", 5),
    (&[Action::Up, Action::Down], "select", 7),
    (&[Action::Details], "details", 4),
    (&[Action::Find], "find", 6),
    (&[Action::Help], "help", 1),
    (&[Action::Quit], "quit", 0),
];

impl Key {
    pub(super) fn matches(self, ev: &KeyEvent) -> bool {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let alt = ev.modifiers.contains(KeyModifiers::ALT);
        match self {
            Key::Ctrl(c) => ctrl && ev.code == KeyCode::Char(c),
            Key::Code(code) => !ctrl && !alt && ev.code == code,
        }
    }
}
