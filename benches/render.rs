//! Render cost per frame with 1,000, 10,000 and 100,000 tracked transactions, into a 160×48
//! `TestBackend`. The dashboard must cost the same whatever the run's size (only visible rows
//! are read), and stay well under its 100 ms frame budget: the goal is ≤ 2 ms per frame.
//!
//! `cargo bench --bench render` prints mean and p99 per frame for each N and the 100k/1k ratio.
//! Frames alternate between the top and the bottom of the largest queue and the detail overlay,
//! so deep rows of the persistent vectors are exercised, not only the first page.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::{Terminal, backend::TestBackend};
use txpace::ui::{App, fixtures};

const WARMUP: usize = 50;
const FRAMES: usize = 1_000;

struct Figures {
    mean: Duration,
    median: Duration,
    p99: Duration,
}

fn measure(n: usize) -> Figures {
    let snap = fixtures::running(n);
    let mut term = Terminal::new(TestBackend::new(160, 48)).expect("test backend");
    let mut apps: Vec<App> = (0..3).map(|_| App::new("bench", false)).collect();
    let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
    apps[1].handle_key(key(KeyCode::End), &snap);
    apps[2].handle_key(key(KeyCode::Char('3')), &snap);
    apps[2].handle_key(key(KeyCode::End), &snap);
    apps[2].handle_key(key(KeyCode::Enter), &snap);

    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..WARMUP + FRAMES {
        let app = &apps[i % apps.len()];
        let t = Instant::now();
        term.draw(|f| app.render(f, &snap)).expect("draw");
        let dt = t.elapsed();
        if i >= WARMUP {
            times.push(dt);
        }
    }
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    let median = times[times.len() / 2];
    let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
    Figures { mean, median, p99 }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this without it, in a
    // debug build, where one quick pass proves it still works.
    if !std::env::args().any(|a| a == "--bench") {
        let f = measure(1_000);
        println!("render smoke: mean {} µs", f.mean.as_micros());
        return;
    }
    println!("render cost per frame, 160x48 TestBackend, {FRAMES} frames each");
    println!(
        "{:>9}  {:>10}  {:>10}  {:>10}",
        "N", "mean µs", "median µs", "p99 µs"
    );
    let mut results = Vec::new();
    for n in [1_000usize, 10_000, 100_000] {
        let f = measure(n);
        println!(
            "{:>9}  {:>10.1}  {:>10.1}  {:>10.1}",
            n,
            f.mean.as_secs_f64() * 1e6,
            f.median.as_secs_f64() * 1e6,
            f.p99.as_secs_f64() * 1e6
        );
        results.push(f);
    }
    let ratio = results[2].mean.as_secs_f64() / results[0].mean.as_secs_f64();
    println!("ratio mean 100k/1k: {ratio:.2} (goal: flat, ~1.0)");
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let worst_mean = results.iter().map(|f| f.mean).max().unwrap_or_default();
    let worst_p99 = results.iter().map(|f| f.p99).max().unwrap_or_default();
    let verdict = |d: Duration| {
        if d <= Duration::from_millis(2) {
            "met"
        } else {
            "NOT met"
        }
    };
    println!(
        "goal ≤ 2000 µs per frame: mean {} (worst {:.0} µs), p99 {} (worst {:.0} µs; \
         p99 also counts the scheduler on a loaded machine)",
        verdict(worst_mean),
        us(worst_mean),
        verdict(worst_p99),
        us(worst_p99)
    );
}
