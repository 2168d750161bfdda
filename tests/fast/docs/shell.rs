//! Commands as a shell reads them, enough to find the program, its subcommand and its flags in
//! a line of a page.

/// Shell-ish words of a command: quoted strings and `$(…)` become one placeholder word, so a
/// `jq -r` inside them is not read as a txpace flag.
pub(crate) fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at_start = word.is_empty() || word.ends_with('=');
        if c.is_whitespace() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        } else if (c == '\'' || c == '"') && at_start {
            let close = chars[i + 1..].iter().position(|&d| d == c);
            match close {
                Some(n) => {
                    word.push_str("ARG");
                    i += n + 1;
                }
                None => word.push(c),
            }
        } else if c == '$' && chars.get(i + 1) == Some(&'(') {
            let mut depth = 0;
            let mut j = i + 1;
            while j < chars.len() {
                match chars[j] {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            word.push_str("ARG");
            i = j;
        } else {
            word.push(c);
        }
        i += 1;
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Where a command's arguments end: a pipe, a list operator, a redirection or a comment.
pub(crate) fn ends_command(word: &str) -> bool {
    matches!(
        word,
        "|" | "||" | "&&" | ";" | ">" | ">>" | "<" | "2>" | "&"
    ) || word.starts_with('#')
}

/// The flags in a word: `--via=rpc` is `--via`; `-u/--url` is `-u` and `--url`; `-vv` is `-v`
/// twice. Not a flag: `-` (standard input), `--` (end of options), `-1`.
pub(crate) fn flags_in(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in word.split('/') {
        let name: String = part
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let name = name.trim_end_matches('-');
        if let Some(long) = name.strip_prefix("--") {
            if long.starts_with(|c: char| c.is_ascii_lowercase()) {
                out.push(name.to_string());
            }
        } else if let Some(shorts) = name.strip_prefix('-')
            && shorts.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            out.extend(shorts.chars().map(|c| format!("-{c}")));
        }
    }
    out
}

pub(crate) fn is_flag(word: &str) -> bool {
    !flags_in(word).is_empty() && word.starts_with('-')
}

/// The program a word runs, by its file name: `target/release/txpace-bench` is txpace-bench.
pub(crate) fn program(word: &str) -> Option<&'static str> {
    match word.rsplit('/').next()? {
        "txpace" => Some("txpace"),
        "txpace-bench" => Some("txpace-bench"),
        "txpace-localnet" => Some("txpace-localnet"),
        "cargo" => Some("cargo"),
        _ => None,
    }
}
