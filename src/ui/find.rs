//! `/`: finding a transaction by the start of its signature, as typed from an explorer link or
//! a log line. Matches are looked for in every queue, in input order from the row that was
//! selected, and the dashboard jumps to the queue and row of the match as you type.
//!
//! ```text
//!  /5VEr▏   match 1 of 3 · Enter keep · Esc back · n/N next/previous afterwards
//! ```
//! Signatures are encoded in base58 once and their first [`HEAD`] characters kept (24 bytes a
//! transaction), so a keystroke costs a comparison per transaction, not an encoding: at
//! 1,000,000 transactions a few milliseconds instead of seconds. A deploy re-signs
//! transactions; a changed signature is noticed by its first bytes and encoded again.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::Paragraph,
};

use super::{fmt, theme::Theme};
use crate::engine::lifecycle::Queue;
use crate::engine::snapshot::Snapshot;

/// Characters of each signature kept for matching; longer queries check the rest by encoding
/// the few transactions whose head matched.
pub const HEAD: usize = 16;

/// The characters base58 uses: a query with any other can match nothing.
const ALPHABET: &str = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// The signature's first bytes, to notice a re-signed transaction.
    sig: [u8; 8],
    head: [u8; HEAD],
    len: u8,
}

/// The base58 heads of every transaction's signature, by transaction id.
#[derive(Debug, Default)]
pub struct SigIndex {
    entries: Vec<Entry>,
}

impl SigIndex {
    /// Brings the index up to `snap`: new transactions and changed signatures are encoded.
    fn refresh(&mut self, snap: &Snapshot) {
        self.entries.resize(snap.txs.len(), Entry::default());
        for (entry, tx) in self.entries.iter_mut().zip(snap.txs.iter()) {
            let bytes = tx.signature.as_ref();
            let mut first = [0u8; 8];
            first.copy_from_slice(&bytes[..8]);
            if entry.len > 0 && entry.sig == first {
                continue;
            }
            let text = bs58::encode(bytes).into_string();
            let n = text.len().min(HEAD);
            entry.sig = first;
            entry.head = [0; HEAD];
            entry.head[..n].copy_from_slice(&text.as_bytes()[..n]);
            entry.len = n as u8;
        }
    }

    fn matches(&self, snap: &Snapshot, id: usize, query: &str) -> bool {
        let Some(e) = self.entries.get(id) else {
            return false;
        };
        let head = &e.head[..e.len as usize];
        let q = query.as_bytes();
        if q.len() <= head.len() {
            return head.starts_with(q);
        }
        head == &q[..head.len()]
            && snap
                .txs
                .get(id)
                .is_some_and(|tx| tx.signature.to_string().starts_with(query))
    }

    /// Every id whose signature starts with `query`, in input order.
    pub fn find_all(&mut self, snap: &Snapshot, query: &str) -> Vec<u32> {
        if query.is_empty() || !query.chars().all(|c| ALPHABET.contains(c)) {
            return Vec::new();
        }
        self.refresh(snap);
        (0..self.entries.len())
            .filter(|&id| self.matches(snap, id, query))
            .map(|id| id as u32)
            .collect()
    }
}

/// Where a transaction is shown: its queue and its row in it.
pub fn locate(snap: &Snapshot, id: u32) -> Option<(Queue, usize)> {
    let queue = snap.txs.get(id as usize)?.state.queue();
    let row = snap.queues[queue as usize].iter().position(|&m| m == id)?;
    Some((queue, row))
}

/// The match to show among `matches` (ascending ids): the first at or after `from` (or before
/// it, going backwards), wrapping around. Returns its index in `matches`.
pub fn pick(matches: &[u32], from: u32, forward: bool) -> Option<usize> {
    if matches.is_empty() {
        return None;
    }
    let at = matches.partition_point(|&id| id < from);
    Some(if forward {
        at % matches.len()
    } else if matches.get(at) == Some(&from) {
        at
    } else {
        (at + matches.len() - 1) % matches.len()
    })
}

/// The prompt while a find is being typed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prompt {
    pub query: String,
    /// Matches of the query and which one is shown.
    pub found: usize,
    pub shown: Option<usize>,
}

/// The prompt line, drawn where the key bar is while a find is typed.
pub fn render_prompt(frame: &mut Frame, area: Rect, prompt: &Prompt, theme: Theme) {
    let status = match (prompt.query.is_empty(), prompt.shown) {
        (true, _) => Span::styled("type the start of a signature", theme.dim()),
        (false, Some(i)) => Span::styled(
            format!(
                "match {} of {}",
                fmt::count(i as u64 + 1),
                fmt::count(prompt.found as u64)
            ),
            theme.ok(),
        ),
        (false, None) if !prompt.query.chars().all(|c| ALPHABET.contains(c)) => {
            Span::styled("no match: base58 has no 0, O, I or l", theme.bad())
        }
        (false, None) => Span::styled("no match", theme.bad()),
    };
    let line = Line::from(vec![
        Span::styled(" / ", theme.key()),
        Span::styled(format!("{}▏", prompt.query), theme.bold()),
        Span::raw("  "),
        status,
        Span::styled(
            "  ·  Enter keep  Esc back  n/N next/previous afterwards",
            theme.dim(),
        ),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::fixtures;

    #[test]
    fn finds_by_prefix_of_any_length() {
        let snap = fixtures::running(300);
        let mut index = SigIndex::default();
        let target = snap.txs.get(123).unwrap().signature.to_string();
        for n in [1, 4, HEAD, HEAD + 1, target.len()] {
            let found = index.find_all(&snap, &target[..n]);
            assert!(found.contains(&123), "prefix of {n}");
            assert!(found.iter().all(|&id| {
                snap.txs
                    .get(id as usize)
                    .unwrap()
                    .signature
                    .to_string()
                    .starts_with(&target[..n])
            }));
        }
        assert_eq!(index.find_all(&snap, &target), [123]);
        assert!(index.find_all(&snap, "0").is_empty());
        assert!(index.find_all(&snap, "").is_empty());
    }

    #[test]
    fn a_resigned_transaction_is_found_by_its_new_signature() {
        let mut snap = fixtures::running(10);
        let mut index = SigIndex::default();
        let old = snap.txs.get(3).unwrap().signature.to_string();
        assert_eq!(index.find_all(&snap, &old), [3]);
        snap.txs.get_mut(3).unwrap().signature = fixtures::signature(9_999);
        let new = snap.txs.get(3).unwrap().signature.to_string();
        assert!(index.find_all(&snap, &old).is_empty());
        assert_eq!(index.find_all(&snap, &new), [3]);
    }

    #[test]
    fn picking_wraps_both_ways() {
        let m = [2, 5, 9];
        assert_eq!(pick(&m, 0, true), Some(0));
        assert_eq!(pick(&m, 5, true), Some(1));
        assert_eq!(pick(&m, 6, true), Some(2));
        assert_eq!(pick(&m, 10, true), Some(0));
        assert_eq!(pick(&m, 5, false), Some(1));
        assert_eq!(pick(&m, 4, false), Some(0));
        assert_eq!(pick(&m, 1, false), Some(2));
        assert_eq!(pick(&[], 1, false), None);
    }
}
