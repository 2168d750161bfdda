//! The pages as Markdown: code spans, code-block lines, links and heading anchors, each with
//! its line, read by pulldown-cmark as GitHub renders them (tables included).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::read;

/// One piece of code on a page: an inline code span, or one line of a code block.
pub(crate) struct Code {
    pub(crate) line: usize,
    pub(crate) text: String,
    pub(crate) inline: bool,
}

/// What the checks need from one page.
pub(crate) struct Page {
    pub(crate) path: PathBuf,
    pub(crate) code: Vec<Code>,
    /// Link targets with their lines.
    pub(crate) links: Vec<(usize, String)>,
    /// Heading anchors as GitHub makes them.
    pub(crate) anchors: BTreeSet<String>,
    /// Every word of code and prose, for "is this flag named anywhere".
    pub(crate) text: String,
}

/// GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens.
pub(crate) fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

pub(crate) fn parse(path: &Path) -> Page {
    let text = read(path);
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut page = Page {
        path: path.to_path_buf(),
        code: Vec::new(),
        links: Vec::new(),
        anchors: BTreeSet::new(),
        text: text.clone(),
    };
    let mut in_block = false;
    let mut heading: Option<String> = None;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (event, range) in Parser::new_ext(&text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_block = true,
            Event::End(TagEnd::CodeBlock) => in_block = false,
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_default();
                page.anchors.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                page.links
                    .push((line_of(range.start), dest_url.to_string()));
            }
            Event::Text(t) if in_block => {
                let first = line_of(range.start);
                for (i, l) in t.lines().enumerate() {
                    page.code.push(Code {
                        line: first + i,
                        text: l.to_string(),
                        inline: false,
                    });
                }
            }
            Event::Text(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
                page.code.push(Code {
                    line: line_of(range.start),
                    text: t.to_string(),
                    inline: true,
                });
            }
            _ => {}
        }
    }
    page
}
