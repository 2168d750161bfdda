//! Styles in one place, so `NO_COLOR` is one switch: without color, emphasis falls back to
//! bold and reversed text, which every terminal shows and which keeps the selection visible.

use ratatui::style::{Color, Modifier, Style};

use crate::engine::lifecycle::TxState;
use crate::engine::snapshot::{ConnState, RunState};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    color: bool,
}

impl Theme {
    pub fn new(no_color: bool) -> Self {
        Theme { color: !no_color }
    }

    pub fn has_color(self) -> bool {
        self.color
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
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
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
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
            ConnState::BackingOff { .. } => self.warn(),
            ConnState::Failed { .. } | ConnState::NoAddress => self.bad(),
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
