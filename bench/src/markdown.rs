//! The benchmarks' tables, built once and shown two ways: as aligned text on standard output
//! and, with `--markdown PATH`, as a Markdown file headed by the command line that produced it,
//! so that docs/performance.md can be those files rather than figures copied by hand.

use std::path::Path;

use anyhow::{Context, Result};

/// How a column's cells line up in the text rendering (Markdown aligns them the same way).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Align {
    Left,
    Right,
}

/// One table of a benchmark's output: a title, a header row, its rows, and the lines printed
/// under it (the units, the ratios, the goals and whether they held).
#[derive(Debug, Default, PartialEq)]
pub struct Section {
    pub title: String,
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Section {
    pub fn new(title: impl Into<String>) -> Self {
        Section {
            title: title.into(),
            ..Section::default()
        }
    }

    /// Adds a column, left-aligned.
    pub fn left(mut self, name: &str) -> Self {
        self.columns.push((name.into(), Align::Left));
        self
    }

    /// Adds a column, right-aligned (figures).
    pub fn right(mut self, name: &str) -> Self {
        self.columns.push((name.into(), Align::Right));
        self
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn note(&mut self, line: impl Into<String>) {
        self.notes.push(line.into());
    }

    /// The section as aligned text: its title, the table (columns padded to their widest
    /// cell), then its notes.
    pub fn text(&self) -> String {
        let mut widths: Vec<usize> = self
            .columns
            .iter()
            .map(|(n, _)| n.chars().count())
            .collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if let Some(w) = widths.get_mut(i) {
                    *w = (*w).max(cell.chars().count());
                }
            }
        }
        let line = |cells: Vec<&str>| {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let w = widths.get(i).copied().unwrap_or(0);
                    match self.columns.get(i).map_or(Align::Left, |c| c.1) {
                        Align::Left => format!("{c:<w$}"),
                        Align::Right => format!("{c:>w$}"),
                    }
                })
                .collect();
            padded.join("  ").trim_end().to_string()
        };
        let mut out = format!("\n{}\n", self.title);
        if !self.columns.is_empty() {
            out += &line(self.columns.iter().map(|(n, _)| n.as_str()).collect());
            out.push('\n');
            for row in &self.rows {
                out += &line(row.iter().map(String::as_str).collect());
                out.push('\n');
            }
        }
        for n in &self.notes {
            out += n;
            out.push('\n');
        }
        out
    }

    /// The section as Markdown: a `###` title, a pipe table, its notes as a list.
    pub fn markdown(&self) -> String {
        let mut out = format!("### {}\n\n", cell(&self.title));
        if !self.columns.is_empty() {
            let names: Vec<String> = self.columns.iter().map(|(n, _)| cell(n)).collect();
            out += &format!("| {} |\n", names.join(" | "));
            let rules: Vec<&str> = self
                .columns
                .iter()
                .map(|(_, a)| match a {
                    Align::Left => ":--",
                    Align::Right => "--:",
                })
                .collect();
            out += &format!("| {} |\n", rules.join(" | "));
            for row in &self.rows {
                let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
                out += &format!("| {} |\n", cells.join(" | "));
            }
            out.push('\n');
        }
        for n in &self.notes {
            out += &format!("- {}\n", n.trim());
        }
        if !self.notes.is_empty() {
            out.push('\n');
        }
        out
    }
}

/// A cell's text made safe inside a pipe table: `|` escaped, line breaks made spaces.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The command line that ran this benchmark, as a user would type it: the program's file name,
/// then each argument, quoted where a shell would need it.
pub fn command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut args = args.into_iter();
    let program = args
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .map_or(p.clone(), |f| f.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "txpace-bench".into());
    std::iter::once(program)
        .chain(args.map(|a| quote(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// The whole Markdown file of a benchmark run: the command that produced it, then each section.
pub fn document(command: &str, sections: &[Section]) -> String {
    let mut out = format!("Produced by `{command}`.\n\n");
    for s in sections {
        out += &s.markdown();
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// Prints every section to standard output and, given a path, writes them there as Markdown
/// headed by this process's command line.
pub fn emit(sections: &[Section], markdown: Option<&Path>) -> Result<()> {
    for s in sections {
        print!("{}", s.text());
    }
    if let Some(path) = markdown {
        let text = document(&command_line(std::env::args()), sections);
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Section {
        let mut s = Section::new("Founding workload: 1000 self-transfers")
            .left("sender")
            .right("landed")
            .right("wall s");
        s.row(vec!["txpace".into(), "1000/1000".into(), "10.2".into()]);
        s.row(vec!["Agave a|b".into(), "990/1000".into(), "12.0".into()]);
        s.note("(landed: unique messages, from the chain)");
        s
    }

    #[test]
    fn a_section_is_a_pipe_table_with_its_notes_as_a_list() {
        assert_eq!(
            sample().markdown(),
            "### Founding workload: 1000 self-transfers\n\n\
             | sender | landed | wall s |\n\
             | :-- | --: | --: |\n\
             | txpace | 1000/1000 | 10.2 |\n\
             | Agave a\\|b | 990/1000 | 12.0 |\n\n\
             - (landed: unique messages, from the chain)\n\n"
        );
    }

    #[test]
    fn the_text_pads_each_column_to_its_widest_cell() {
        assert_eq!(
            sample().text(),
            "\nFounding workload: 1000 self-transfers\n\
             sender        landed  wall s\n\
             txpace     1000/1000    10.2\n\
             Agave a|b   990/1000    12.0\n\
             (landed: unique messages, from the chain)\n"
        );
    }

    #[test]
    fn the_document_names_the_command_that_produced_it() {
        let command = command_line(
            [
                "/tgt/release/txpace-bench",
                "send",
                "--count",
                "1000",
                "--markdown",
                "docs/it's.md",
            ]
            .map(String::from),
        );
        assert_eq!(
            command,
            "txpace-bench send --count 1000 --markdown 'docs/it'\\''s.md'"
        );
        let doc = document(&command, &[sample(), Section::new("Empty")]);
        assert!(doc.starts_with("Produced by `txpace-bench send --count 1000"));
        assert!(doc.contains("| txpace | 1000/1000 | 10.2 |\n"));
        assert!(doc.ends_with("### Empty\n"), "{doc}");
    }

    #[test]
    fn emit_writes_the_markdown_file() {
        let path = std::env::temp_dir().join(format!("txpace-bench-md-{}.md", std::process::id()));
        emit(&[sample()], Some(&path)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("Produced by `"));
        assert!(text.contains("| Agave a\\|b | 990/1000 | 12.0 |"));
        let _ = std::fs::remove_file(&path);
    }
}
