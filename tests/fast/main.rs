//! The integration tests that need no validator, in one test binary: the command line, the
//! engine on the simulated cluster, the input formats, the report's schema, the dashboard
//! (rendered, driven by keys and mouse, and in a pseudo-terminal), logging, file modes and the
//! scripts. One binary links txpace and its dependencies once, where one per file linked them
//! once per file.
//!
//! The tests run side by side on threads of one process, so the few that set process-wide state
//! (the process's one logger, environment variables) or are the program in a pseudo-terminal run
//! their body in a process of their own (`common::own_process`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../fixtures/support.rs"]
mod support;

mod cli_config;
mod cli_docs;
mod cli_help;
mod cli_numbers;
mod docs;
mod engine_events;
mod engine_host;
mod engine_outage;
mod engine_reality;
mod engine_sim;
mod file_modes;
mod headless_logging;
mod helpers;
mod inspect_cli;
mod logging_verbosity;
mod report_schema;
mod scripts;
mod source_formats;
mod source_validation;
mod ui_keys;
mod ui_links;
mod ui_logging;
mod ui_mouse;
mod ui_pty;
mod ui_rate;
mod ui_render;
