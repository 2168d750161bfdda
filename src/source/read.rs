//! Reading one input (a file or standard input) into raw items, streaming: a line file is never
//! held in memory as a whole, and no line longer than any transaction's text is kept.

use std::{
    fs::File,
    io::{self, BufRead, BufReader, Cursor, Read},
    path::Path,
    sync::Arc,
};

use serde::de::{Deserializer as _, SeqAccess, Visitor};

use super::{
    Origin, PACKET_DATA_SIZE, SourceError,
    format::{self, BOM, Encoding, InputFormat, Layout, SAMPLE_LEN},
    pipeline::{FileFeed, Pipeline, Raw},
};

/// Lines longer than this are reported as too large without being kept. Generous: the longest
/// text of a 1232-byte transaction is 1683 base58 characters.
const MAX_LINE: usize = 8 * 1024;

/// How standard input is named in origins.
pub(crate) const STDIN_NAME: &str = "<stdin>";

/// Reads one input into `pipeline`, detecting its layout unless `format` forces one.
pub(crate) fn read_input(
    path: &Path,
    format: InputFormat,
    pipeline: &mut Pipeline<'_>,
) -> Result<(), SourceError> {
    let (name, mut input): (String, Box<dyn Read>) = if path.as_os_str() == "-" {
        (STDIN_NAME.to_string(), Box::new(io::stdin().lock()))
    } else {
        let file = File::open(path).map_err(|err| SourceError::Open {
            path: path.to_path_buf(),
            err,
        })?;
        (path.display().to_string(), Box::new(file))
    };
    let read_err = |err| SourceError::Read {
        name: name.clone(),
        err,
    };

    let mut sample = Vec::new();
    (&mut input)
        .take(SAMPLE_LEN as u64)
        .read_to_end(&mut sample)
        .map_err(read_err)?;
    let at_eof = sample.len() < SAMPLE_LEN;
    let layout = match format {
        InputFormat::Auto => format::detect(&sample),
        InputFormat::Base64 => Layout::Lines(Some(Encoding::Base64)),
        InputFormat::Base58 => Layout::Lines(Some(Encoding::Base58)),
        InputFormat::Json => Layout::Json,
        InputFormat::Binary => Layout::Binary,
    };

    if layout == Layout::Binary {
        let mut feed = pipeline.file(None);
        let raw = if at_eof && sample.len() <= PACKET_DATA_SIZE {
            Raw::Bytes(sample)
        } else {
            // Count the rest without keeping it.
            let rest = io::copy(&mut input, &mut io::sink()).map_err(read_err)?;
            let size = u64::try_from(sample.len())
                .unwrap_or(u64::MAX)
                .saturating_add(rest);
            Raw::Bad(format!("too large: {size} bytes > {PACKET_DATA_SIZE}"))
        };
        feed.push(Origin::from(name.as_str()), raw);
        feed.finish();
        return Ok(());
    }

    if sample.starts_with(BOM) {
        sample.drain(..BOM.len());
    }
    let reader = BufReader::with_capacity(SAMPLE_LEN, Cursor::new(sample).chain(input));
    match layout {
        Layout::Lines(forced) => read_lines(&name, reader, pipeline.file(forced)).map_err(read_err),
        _ => read_json(&name, reader, pipeline.file(None)).map_err(read_err),
    }
}

fn read_lines(name: &str, mut reader: impl BufRead, mut feed: FileFeed) -> io::Result<()> {
    let file: Arc<str> = name.into();
    let mut buf = Vec::with_capacity(2048);
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let overlong = n == MAX_LINE && buf.last() != Some(&b'\n');
        let extra = if overlong { skip_line(&mut reader)? } else { 0 };
        let text = buf.trim_ascii();
        if text.is_empty() || text.starts_with(b"#") {
            continue;
        }
        let origin = Origin::line(&file, line_no as u64);
        let raw = if overlong {
            Raw::Bad(format!("too large: line of {} characters", n + extra))
        } else {
            // Invalid UTF-8 becomes U+FFFD, which then fails decoding with the usual reason.
            Raw::Text(String::from_utf8_lossy(text).into_owned())
        };
        feed.push(origin, raw);
    }
    feed.finish();
    Ok(())
}

/// Consumes the rest of an overlong line; returns how many bytes it had, newline excluded.
fn skip_line(reader: &mut impl BufRead) -> io::Result<usize> {
    let mut skipped = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(skipped);
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                reader.consume(pos + 1);
                return Ok(skipped + pos);
            }
            None => {
                let len = buf.len();
                reader.consume(len);
                skipped += len;
            }
        }
    }
}

/// Streams the array's elements into `feed` as they are parsed. Malformed JSON ends the file
/// with one problem at the line where parsing stopped; what came before it is kept.
fn read_json(name: &str, reader: impl Read, mut feed: FileFeed) -> io::Result<()> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let result = (&mut de)
        .deserialize_seq(ArrayVisitor {
            name,
            feed: &mut feed,
        })
        .and_then(|()| de.end());
    if let Err(err) = result {
        if err.is_io() {
            return Err(err.into());
        }
        let full = err.to_string();
        let position = format!(" at line {} column {}", err.line(), err.column());
        let message = full.strip_suffix(&position).unwrap_or(&full);
        let origin = match err.line() {
            0 => Origin::from(name),
            line => Origin::line(&Arc::from(name), line as u64),
        };
        feed.push(origin, Raw::Bad(format!("invalid JSON: {message}")));
    }
    feed.finish();
    Ok(())
}

struct ArrayVisitor<'f, 'p, 'a> {
    name: &'f str,
    feed: &'f mut FileFeed<'p, 'a>,
}

impl<'de> Visitor<'de> for ArrayVisitor<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON array of base64 or base58 strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let file: Arc<str> = self.name.into();
        let mut index = 0u64;
        while let Some(value) = seq.next_element::<serde_json::Value>()? {
            let raw = match value {
                serde_json::Value::String(s) => match s.trim() {
                    "" => Raw::Bad("empty string".to_string()),
                    t if t.len() == s.len() => Raw::Text(s),
                    t => Raw::Text(t.to_string()),
                },
                other => Raw::Bad(format!("not a string but {}", json_kind(&other))),
            };
            let origin = Origin::index(&file, index);
            self.feed.push(origin, raw);
            index += 1;
        }
        Ok(())
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
