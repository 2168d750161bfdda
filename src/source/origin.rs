//! Where an input item came from, as users read it in problems, the detail view, the journal
//! and reports: `FILE:LINE`, `FILE[INDEX]`, or a text as is.

use std::{fmt, sync::Arc};

use serde::{Serialize, Serializer};

/// Where one input item came from. The file's name is shared by all of its items: written out
/// in each (`FILE:LINE` as one string) it cost a million-transaction file some 64 bytes a
/// transaction held.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A line (1-based) of a line file: `FILE:LINE`.
    Line(Arc<str>, u32),
    /// An element (0-based) of a JSON array: `FILE[INDEX]`.
    Index(Arc<str>, u32),
    /// Anything else as is: a binary file's name, a deploy's step, an origin read back from a
    /// journal, a line past the 4 billionth.
    Text(Arc<str>),
}

impl Origin {
    /// Line `line` (1-based) of the file named `file`.
    pub fn line(file: &Arc<str>, line: u64) -> Origin {
        match u32::try_from(line) {
            Ok(line) => Origin::Line(Arc::clone(file), line),
            Err(_) => Origin::Text(format!("{file}:{line}").into()),
        }
    }

    /// Element `index` (0-based) of the JSON array in the file named `file`.
    pub fn index(file: &Arc<str>, index: u64) -> Origin {
        match u32::try_from(index) {
            Ok(index) => Origin::Index(Arc::clone(file), index),
            Err(_) => Origin::Text(format!("{file}[{index}]").into()),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Line(file, line) => write!(f, "{file}:{line}"),
            Origin::Index(file, index) => write!(f, "{file}[{index}]"),
            Origin::Text(text) => f.write_str(text),
        }
    }
}

impl Serialize for Origin {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl From<&str> for Origin {
    fn from(text: &str) -> Origin {
        Origin::Text(text.into())
    }
}

impl From<String> for Origin {
    fn from(text: String) -> Origin {
        Origin::Text(text.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_reads_as_its_one_string_did_and_shares_its_file_name() {
        let file: Arc<str> = "in.b64".into();
        let line = Origin::line(&file, 12);
        assert_eq!(line.to_string(), "in.b64:12");
        assert_eq!(Origin::index(&file, 0).to_string(), "in.b64[0]");
        assert_eq!(Origin::from("deploy X").to_string(), "deploy X");
        assert_eq!(serde_json::to_string(&line).unwrap(), "\"in.b64:12\"");
        assert!(matches!(&line, Origin::Line(f, 12) if Arc::ptr_eq(f, &file)));
        // Past u32: written out whole, still right.
        let far = Origin::line(&file, 5_000_000_000);
        assert_eq!(far.to_string(), "in.b64:5000000000");
        assert_eq!(std::mem::size_of::<Origin>(), 24);
    }
}
