//! The one table of keys. The key handler, the help overlay and the key bar all read it
//! (through [`Keymap`], which is [`BINDINGS`] with txpace.toml's `[keys]` applied), so what the
//! screen says a key does is what it does. `bindings` holds the defaults; `rebind` applies
//! txpace.toml to them and names keys as the file writes them.

mod bindings;
mod rebind;

pub use bindings::{Action, BAR, BINDINGS, Binding, Key};
pub use rebind::{Keymap, KeymapError, Row, label, name, parse};
