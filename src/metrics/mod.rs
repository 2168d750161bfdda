//! `--metrics ADDR`: a Prometheus endpoint (`GET /metrics`, text format 0.0.4) on the run,
//! for the monitoring operators already have. Like the dashboard, it only reads the engine's
//! snapshots; a scrape encodes the latest one (see [`families`] for what is served).
//!
//! ```text
//!  engine snapshots (watch) ─► keeper task (last snapshot of each deploy phase)
//!                                   │
//!  GET /metrics ─► hyper ───────────┴─► families::encode ─► text
//! ```

mod families;
mod link;
mod series;

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use anyhow::Context;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode, body::Bytes, header, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::{net::TcpListener, sync::watch};

use crate::engine::snapshot::Snapshot;

/// Content type of Prometheus' text exposition format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The listening socket, bound before the run starts so a taken port is refused up front.
pub struct MetricsListener {
    listener: std::net::TcpListener,
    addr: SocketAddr,
}

impl MetricsListener {
    /// Binds `addr` (port 0 picks a free one; [`MetricsListener::local_addr`] says which).
    pub fn bind(addr: SocketAddr) -> anyhow::Result<Self> {
        let listener = std::net::TcpListener::bind(addr)
            .with_context(|| format!("--metrics {addr}: cannot listen there"))?;
        listener
            .set_nonblocking(true)
            .with_context(|| format!("--metrics {addr}: setting up the socket"))?;
        let addr = listener.local_addr().unwrap_or(addr);
        Ok(Self { listener, addr })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `snapshots` until the runtime ends. Needs a tokio runtime.
    pub fn serve(self, snapshots: watch::Receiver<Arc<Snapshot>>) -> anyhow::Result<()> {
        let listener = TcpListener::from_std(self.listener)
            .with_context(|| format!("--metrics {}: setting up the socket", self.addr))?;
        let runs = Arc::new(Runs::default());
        tokio::spawn(keep(snapshots.clone(), runs.clone()));
        tokio::spawn(accept(listener, snapshots, runs));
        Ok(())
    }
}

/// The last snapshot of each engine run, by deploy phase (0 for a plain send): a finished
/// phase's series keep their final values, taken from the relay's record of ended phases so
/// that a phase that ended between two wake-ups is not left at an earlier picture.
#[derive(Default)]
struct Runs(Mutex<BTreeMap<u8, Arc<Snapshot>>>);

impl Runs {
    /// Keeps `snap` as its phase's latest, and every ended phase's last picture it carries.
    fn note(&self, snap: Arc<Snapshot>) {
        let step = |s: &Snapshot| s.phase.as_ref().map_or(0, |p| p.step);
        let mut runs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for done in snap.finished_phases.iter() {
            runs.insert(step(done), done.clone());
        }
        runs.insert(step(&snap), snap);
    }

    fn render(&self) -> String {
        let runs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let series: Vec<families::Series<'_>> = runs
            .values()
            .map(|snap| families::Series {
                base: snap
                    .phase
                    .as_ref()
                    .map(|p| vec![("phase", p.name.to_string())])
                    .unwrap_or_default(),
                snap,
            })
            .collect();
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = families::encode(&series, &mut text);
        // Leader identities and endpoints are public, but errors may quote a URL: scrubbed
        // like every other output.
        crate::redact::scrub_owned(text)
    }
}

/// Follows the snapshots so that every phase's last one is kept even when no scrape came
/// during it.
async fn keep(mut snapshots: watch::Receiver<Arc<Snapshot>>, runs: Arc<Runs>) {
    loop {
        let snap = snapshots.borrow_and_update().clone();
        runs.note(snap);
        if snapshots.changed().await.is_err() {
            break;
        }
    }
}

async fn accept(listener: TcpListener, snapshots: watch::Receiver<Arc<Snapshot>>, runs: Arc<Runs>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                log::warn!("metrics: accepting a connection failed: {e}");
                continue;
            }
        };
        let snapshots = snapshots.clone();
        let runs = runs.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let snapshots = snapshots.clone();
                let runs = runs.clone();
                async move { Ok::<_, std::convert::Infallible>(respond(&req, &snapshots, &runs)) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                log::debug!("metrics: connection ended: {e}");
            }
        });
    }
}

fn respond(
    req: &Request<hyper::body::Incoming>,
    snapshots: &watch::Receiver<Arc<Snapshot>>,
    runs: &Runs,
) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, kind: &'static str, body: String| {
        let mut resp = Response::new(Full::new(Bytes::from(body)));
        *resp.status_mut() = status;
        resp.headers_mut()
            .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(kind));
        resp
    };
    match (req.method(), req.uri().path()) {
        (&hyper::Method::GET, "/metrics") => {
            runs.note(snapshots.borrow().clone());
            reply(StatusCode::OK, CONTENT_TYPE, runs.render())
        }
        (&hyper::Method::GET, "/") => reply(
            StatusCode::OK,
            "text/plain; charset=utf-8",
            "txpace: metrics are at /metrics\n".to_string(),
        ),
        _ => reply(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "not found: metrics are at GET /metrics\n".to_string(),
        ),
    }
}

#[cfg(test)]
mod tests;
