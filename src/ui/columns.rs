//! Table columns that give way on narrow terminals: each has a priority, and the most useful
//! ones that fit are kept, in their display order, instead of every column squeezed unreadable.
//! A panel's table is a list of [`Column`]s (title, width, priority, alignment); [`Fit`] picks
//! the ones shown for a frame and builds the table with its header, the same for every panel.

use ratatui::{
    layout::Constraint,
    style::Style,
    text::Line,
    widgets::{Cell, Row, Table},
};

/// Cells between two columns.
const SPACING: u16 = 1;

#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// The header's title.
    pub title: &'static str,
    pub width: u16,
    /// Lower is kept first.
    pub priority: u8,
    /// Takes the space left over (at least `width`).
    pub fill: bool,
    /// Right-aligned, title included: a column of numbers.
    pub right: bool,
}

impl Column {
    pub const fn fixed(title: &'static str, width: u16, priority: u8) -> Self {
        Column {
            title,
            width,
            priority,
            fill: false,
            right: false,
        }
    }

    pub const fn fill(title: &'static str, min: u16, priority: u8) -> Self {
        Column {
            fill: true,
            ..Column::fixed(title, min, priority)
        }
    }

    /// The same column, right-aligned.
    pub const fn right(self) -> Self {
        Column {
            right: true,
            ..self
        }
    }
}

/// The columns of a table that fit the width it has this frame.
pub struct Fit {
    cols: &'static [Column],
    /// Indices of the columns shown, in display order.
    keep: Vec<usize>,
    widths: Vec<Constraint>,
}

impl Fit {
    /// Keeps the columns of `cols` that fit in `avail` cells, most useful first.
    pub fn new(cols: &'static [Column], avail: u16) -> Self {
        let mut order: Vec<usize> = (0..cols.len()).collect();
        order.sort_by_key(|&i| (cols[i].priority, i));
        let mut used: u32 = 0;
        let mut keep = vec![false; cols.len()];
        for i in order {
            let extra = if used == 0 { 0 } else { u32::from(SPACING) };
            let need = used + extra + u32::from(cols[i].width);
            if need <= u32::from(avail) {
                used = need;
                keep[i] = true;
            }
        }
        let keep: Vec<usize> = (0..cols.len()).filter(|&i| keep[i]).collect();
        let widths = keep
            .iter()
            .map(|&i| {
                if cols[i].fill {
                    Constraint::Fill(1)
                } else {
                    Constraint::Length(cols[i].width)
                }
            })
            .collect();
        Fit { cols, keep, widths }
    }

    /// The cells of the columns shown, from a row's cells for every column in display order.
    pub fn pick<'a>(&self, cells: Vec<Cell<'a>>) -> Vec<Cell<'a>> {
        let mut cells: Vec<Option<Cell>> = cells.into_iter().map(Some).collect();
        self.keep.iter().filter_map(|&i| cells[i].take()).collect()
    }

    /// The table of `rows` under the shown columns' titles, the header in `header_style`.
    pub fn table<'a>(&self, rows: Vec<Row<'a>>, header_style: Style) -> Table<'a> {
        let titles = self.keep.iter().map(|&i| {
            let c = &self.cols[i];
            if c.right {
                right(c.title)
            } else {
                Cell::from(c.title)
            }
        });
        Table::new(rows, self.widths.clone())
            .header(Row::new(titles).style(header_style))
            .column_spacing(SPACING)
    }
}

/// A cell of a right-aligned column.
pub fn right<'a>(content: impl Into<Line<'a>>) -> Cell<'a> {
    Cell::from(content.into().right_aligned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [Column; 3] = [
        Column::fixed("a", 4, 1),
        Column::fill("b", 6, 0),
        Column::fixed("c", 3, 2).right(),
    ];

    #[test]
    fn the_most_useful_columns_that_fit_are_kept_in_display_order() {
        assert_eq!(Fit::new(&COLS, 15).keep, vec![0, 1, 2]);
        assert_eq!(Fit::new(&COLS, 11).keep, vec![0, 1]);
        assert_eq!(Fit::new(&COLS, 10).keep, vec![1, 2]);
        assert_eq!(Fit::new(&COLS, 6).keep, vec![1]);
        let fit = Fit::new(&COLS, 10);
        assert_eq!(fit.widths, vec![Constraint::Fill(1), Constraint::Length(3)]);
        let cells = fit.pick(vec![Cell::from("x"), Cell::from("y"), Cell::from("z")]);
        assert_eq!(cells, vec![Cell::from("y"), Cell::from("z")]);
    }
}
