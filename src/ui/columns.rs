//! Table columns that give way on narrow terminals: each has a priority, and the most useful
//! ones that fit are kept, in their display order, instead of every column squeezed unreadable.

use ratatui::layout::Constraint;

#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub width: u16,
    /// Lower is kept first.
    pub priority: u8,
    /// Takes the space left over (at least `width`).
    pub fill: bool,
}

impl Column {
    pub const fn fixed(width: u16, priority: u8) -> Self {
        Column {
            width,
            priority,
            fill: false,
        }
    }

    pub const fn fill(min: u16, priority: u8) -> Self {
        Column {
            width: min,
            priority,
            fill: true,
        }
    }
}

/// Indices of the columns to show in `avail` cells with `spacing` between columns, in display
/// order, and their constraints.
pub fn fit(cols: &[Column], avail: u16, spacing: u16) -> (Vec<usize>, Vec<Constraint>) {
    let mut order: Vec<usize> = (0..cols.len()).collect();
    order.sort_by_key(|&i| (cols[i].priority, i));
    let mut used: u32 = 0;
    let mut keep = vec![false; cols.len()];
    for i in order {
        let extra = if used == 0 { 0 } else { spacing as u32 };
        let need = used + extra + cols[i].width as u32;
        if need <= avail as u32 {
            used = need;
            keep[i] = true;
        }
    }
    let idx: Vec<usize> = (0..cols.len()).filter(|&i| keep[i]).collect();
    let constraints = idx
        .iter()
        .map(|&i| {
            if cols[i].fill {
                Constraint::Fill(1)
            } else {
                Constraint::Length(cols[i].width)
            }
        })
        .collect();
    (idx, constraints)
}
