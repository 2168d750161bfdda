//! Checks reports against the JSON schemas shipped in `assets/`: `report.schema.json` for
//! `send`/`demo --report`, `deploy-report.schema.json` for `deploy --report` (whose phases each
//! hold a run report, referenced by the schema's `$id`).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Which schema a report must follow.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Run,
    Deploy,
}

impl Kind {
    fn file(self) -> &'static str {
        match self {
            Kind::Run => "report.schema.json",
            Kind::Deploy => "deploy-report.schema.json",
        }
    }
}

fn asset(name: &str) -> Value {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading the schema {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the schema {} is not JSON: {e}", path.display()))
}

/// Every way `report` breaks the schema of `kind`, as `path: message` lines; empty when it
/// conforms.
pub fn violations(kind: Kind, report: &Value) -> Vec<String> {
    let run = asset(Kind::Run.file());
    let schema = asset(kind.file());
    let run_id = run["$id"]
        .as_str()
        .expect("report.schema.json has an $id")
        .to_string();
    // The deploy schema's `$ref: report.schema.json` resolves against its `$id` to this one.
    let registry = jsonschema::Registry::new()
        .add(&run_id, run)
        .and_then(|b| b.prepare())
        .unwrap_or_else(|e| panic!("assets/report.schema.json cannot be registered: {e}"));
    let validator = jsonschema::options()
        .with_registry(&registry)
        .build(&schema)
        .unwrap_or_else(|e| panic!("assets/{} is not a valid schema: {e}", kind.file()));
    validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Panics, listing every violation, unless `report` conforms to the schema of `kind`.
pub fn assert_conforms(kind: Kind, report: &Value) {
    let wrong = violations(kind, report);
    assert!(
        wrong.is_empty(),
        "the report breaks assets/{}:\n{}\n--- report:\n{report:#}",
        kind.file(),
        wrong.join("\n")
    );
}
