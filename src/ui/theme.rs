//! Styles in one place, so `NO_COLOR` and the light theme are one switch each: without color,
//! emphasis falls back to bold and reversed text, which every terminal shows and which keeps
//! the selection visible; the light theme swaps the colors a white background washes out
//! (yellow, cyan, light gray) for darker ones from the 256-color palette.

use ratatui::style::{Color, Modifier, Style};

use crate::engine::lifecycle::TxState;
use crate::engine::snapshot::{ConnState, RunState, Verdict};

/// The theme a user asks for (`--theme`, `theme =` in txpace.toml).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Deserialize,
    serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ThemeName {
    /// Light when the terminal says its background is light (`COLORFGBG`), dark otherwise
    #[default]
    Auto,
    /// Colors for a dark background
    Dark,
    /// Colors for a light background
    Light,
}

impl ThemeName {
    pub fn as_str(self) -> &'static str {
        match self {
            ThemeName::Auto => "auto",
            ThemeName::Dark => "dark",
            ThemeName::Light => "light",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Palette {
    None,
    Dark,
    Light,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    palette: Palette,
}

/// The light palette: 256-color indexes that stay readable on white.
mod light {
    use ratatui::style::Color;
    pub const GREEN: Color = Color::Indexed(28);
    pub const ORANGE: Color = Color::Indexed(130);
    pub const RED: Color = Color::Indexed(160);
    pub const BLUE: Color = Color::Indexed(25);
    pub const GRAY: Color = Color::Indexed(242);
    pub const BORDER: Color = Color::Indexed(246);
    pub const WHITE: Color = Color::Indexed(231);
}

impl Theme {
    /// The dark theme, or no colors at all.
    pub fn new(no_color: bool) -> Self {
        Theme::pick(ThemeName::Dark, no_color, None)
    }

    /// The theme for `name`: `no_color` (from `NO_COLOR`) wins over any name; `auto` reads
    /// `colorfgbg`, the `COLORFGBG` variable some terminals set to "FG;BG", whose background
    /// 7 or 15 (white) means a light terminal.
    pub fn pick(name: ThemeName, no_color: bool, colorfgbg: Option<&str>) -> Self {
        let palette = match name {
            _ if no_color => Palette::None,
            ThemeName::Dark => Palette::Dark,
            ThemeName::Light => Palette::Light,
            ThemeName::Auto => {
                let bg = colorfgbg.and_then(|v| v.rsplit(';').next());
                if matches!(bg.map(str::trim), Some("7" | "15")) {
                    Palette::Light
                } else {
                    Palette::Dark
                }
            }
        };
        Theme { palette }
    }

    /// The theme from the environment: `NO_COLOR` and, for `auto`, `COLORFGBG`.
    pub fn from_env(name: ThemeName) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let fgbg = std::env::var("COLORFGBG").ok();
        Theme::pick(name, no_color, fgbg.as_deref())
    }

    pub fn has_color(self) -> bool {
        self.palette != Palette::None
    }

    pub fn is_light(self) -> bool {
        self.palette == Palette::Light
    }

    /// `c` as the dark theme has it, its light counterpart in the light theme, nothing
    /// without color.
    fn fg(self, c: Color) -> Style {
        let light = match c {
            Color::Green => light::GREEN,
            Color::Yellow => light::ORANGE,
            Color::Red => light::RED,
            Color::Cyan => light::BLUE,
            Color::DarkGray => light::GRAY,
            Color::Gray => light::BORDER,
            other => other,
        };
        match self.palette {
            Palette::None => Style::new(),
            Palette::Dark => Style::new().fg(c),
            Palette::Light => Style::new().fg(light),
        }
    }

    pub fn plain(self) -> Style {
        Style::new()
    }

    pub fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }

    pub fn warn(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub fn bad(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// Labels and secondary figures.
    pub fn dim(self) -> Style {
        self.fg(Color::DarkGray)
    }

    pub fn accent(self) -> Style {
        self.fg(Color::Cyan)
    }

    /// The selected row and the current tab: reversed works with and without color.
    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    pub fn key(self) -> Style {
        match self.palette {
            Palette::None => Style::new().add_modifier(Modifier::REVERSED),
            Palette::Dark => Style::new().fg(Color::Black).bg(Color::Cyan),
            Palette::Light => Style::new().fg(light::WHITE).bg(light::BLUE),
        }
    }

    pub fn border(self) -> Style {
        self.fg(Color::Gray)
    }

    pub fn run_state(self, run: &RunState) -> Style {
        match run {
            RunState::Running => self.ok().add_modifier(Modifier::BOLD),
            RunState::Starting => self.accent().add_modifier(Modifier::BOLD),
            RunState::Paused | RunState::Stopped => self.warn().add_modifier(Modifier::REVERSED),
            RunState::Done => self.ok().add_modifier(Modifier::BOLD | Modifier::REVERSED),
            RunState::Failed(_) => self.bad().add_modifier(Modifier::REVERSED),
        }
    }

    pub fn conn(self, conn: &ConnState) -> Style {
        match conn {
            ConnState::Connected => self.ok(),
            ConnState::Idle | ConnState::Connecting => self.accent(),
            ConnState::BackingOff { .. } | ConnState::Silent { .. } => self.warn(),
            ConnState::Failed { .. } | ConnState::NoAddress => self.bad(),
        }
    }

    /// A leader's link verdict: fine, worth knowing, slowing us, stopping us.
    pub fn verdict(self, verdict: Option<Verdict>) -> Style {
        match verdict {
            None => self.dim(),
            Some(Verdict::Ok) => self.ok(),
            Some(Verdict::Far) => self.accent(),
            Some(Verdict::Lossy | Verdict::Budget | Verdict::Ignoring) => self.warn(),
            Some(Verdict::Evicted | Verdict::Dark) => self.bad(),
        }
    }

    pub fn tx_state(self, state: TxState) -> Style {
        match state {
            TxState::Queued => self.dim(),
            TxState::Sent => self.plain(),
            TxState::Resent => self.warn(),
            TxState::Confirmed => self.ok(),
            TxState::Failed | TxState::Expired => self.bad(),
        }
    }

    /// The two series of the rate chart; without color they differ by marker instead.
    pub fn series_sent(self) -> Style {
        self.fg(Color::Cyan)
    }

    pub fn series_confirmed(self) -> Style {
        self.fg(Color::Green)
    }
}
