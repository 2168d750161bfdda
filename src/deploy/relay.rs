//! One dashboard across several engine runs.
//!
//! A deploy runs one batch of its engine host per phase (buffer, writes, deploy), because each
//! phase may only start once the previous one landed, and each batch publishes its own pictures.
//! The dashboard and the headless progress lines must not notice: the relay republishes every
//! batch's snapshots on one channel, adding the phase and the program bytes confirmed so far,
//! keeping elapsed time running across phases, and showing DONE only after the last one.
//! Commands from the dashboard go to the engine while a batch runs, and a pause or rate change
//! carries over to the next phase.
//!
//! ```text
//!  batch (buffer) ─┐                         ┌─► dashboard / progress lines
//!  batch (writes) ─┼─► relay (+phase, bytes) ┤
//!  batch (deploy) ─┘          ▲              └── commands (pause, rate, stop)
//! ```

use std::{sync::Arc, time::Duration};

use tokio::sync::{mpsc, watch};

use crate::engine::{
    EngineConfig, EngineHandle, RunOutcome,
    command::Command,
    lifecycle::Queue,
    snapshot::{PhaseView, RateTarget, RunState, Snapshot},
};

/// One phase as the dashboard shows it.
#[derive(Clone, Debug)]
pub struct Phase {
    pub name: &'static str,
    /// 1-based.
    pub step: u8,
    pub steps: u8,
    /// Program bytes in the buffer before this phase's transactions.
    pub bytes_before: u64,
    /// Program bytes each of this phase's transactions writes, by engine id.
    pub bytes: Arc<[u64]>,
    pub bytes_total: u64,
}

/// The dashboard's side: what it reads and where its commands go.
pub struct RelayEnds {
    pub snapshots: watch::Receiver<Arc<Snapshot>>,
    pub commands: mpsc::UnboundedSender<Command>,
}

pub struct Relay {
    out: watch::Sender<Arc<Snapshot>>,
    commands: Option<mpsc::UnboundedReceiver<Command>>,
    last: Arc<Snapshot>,
    stopped: bool,
    paused: bool,
    rate: Option<RateTarget>,
    /// Elapsed time of the phases before this one.
    offset: Duration,
    seq: u64,
    /// Members of the Confirmed queue already counted, and their bytes.
    counted: usize,
    confirmed_bytes: u64,
    /// The last picture of every phase that has ended, carried in every later picture.
    finished: Vec<Arc<Snapshot>>,
}

impl Relay {
    /// A relay showing `first` until the first engine publishes; `start_paused` as the user
    /// asked for the first engine.
    pub fn new(first: Arc<Snapshot>, start_paused: bool) -> (Self, RelayEnds) {
        let (out, snapshots) = watch::channel(first.clone());
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        (
            Relay {
                out,
                commands: Some(cmd_rx),
                last: first,
                stopped: false,
                paused: start_paused,
                rate: None,
                offset: Duration::ZERO,
                seq: 0,
                counted: 0,
                confirmed_bytes: 0,
                finished: Vec::new(),
            },
            RelayEnds {
                snapshots,
                commands: cmd_tx,
            },
        )
    }

    /// The user asked to stop (dashboard `q`, Ctrl-C): no further phase may start.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Relays `engine` as `phase` until it ends, and returns its outcome. The engine's own start
    /// state is overridden by what the user chose during earlier phases.
    pub async fn run(
        &mut self,
        phase: &Phase,
        engine: EngineHandle,
        last_phase: bool,
    ) -> Result<RunOutcome, String> {
        self.counted = 0;
        self.confirmed_bytes = 0;
        let EngineHandle {
            commands,
            mut snapshots,
            mut task,
        } = engine;
        if let Some(rate) = self.rate {
            let _ = commands.send(Command::SetRate(rate));
        }
        let _ = commands.send(if self.paused {
            Command::Pause
        } else {
            Command::Resume
        });
        if self.stopped {
            let _ = commands.send(Command::Stop);
        }
        let mut engine_live = true;
        loop {
            tokio::select! {
                biased;
                done = &mut task => {
                    let outcome = done.map_err(|e| e.to_string())?;
                    self.publish(&outcome.snapshot, phase, last_phase);
                    self.finished.push(self.last.clone());
                    self.offset += outcome.snapshot.elapsed;
                    return Ok(outcome);
                }
                cmd = recv(&mut self.commands) => match cmd {
                    Some(cmd) => {
                        self.remember(&cmd);
                        let _ = commands.send(cmd);
                    }
                    None => self.commands = None,
                },
                changed = snapshots.changed(), if engine_live => match changed {
                    Ok(()) => {
                        let snap = snapshots.borrow_and_update().clone();
                        self.publish(&snap, phase, last_phase);
                    }
                    Err(_) => engine_live = false,
                },
            }
        }
    }

    /// Shows `phase` on the last picture while no engine runs (a check between phases).
    pub fn announce(&mut self, phase: &Phase) {
        self.counted = 0;
        self.confirmed_bytes = 0;
        // The cluster, leaders and rates stay; the transactions were the previous phase's.
        let mut blank = (*self.last).clone();
        blank.counts = Default::default();
        blank.txs = Default::default();
        blank.queues = Default::default();
        blank.latency = Default::default();
        let mut snap = self.decorate(&blank, phase, false);
        snap.run = RunState::Running;
        self.send(snap);
    }

    /// Ends the run on the dashboard with `state` (a failure between phases), so the dashboard
    /// shows it and headless progress stops.
    pub fn finish(&mut self, state: RunState) {
        let mut snap = (*self.last).clone();
        snap.run = state;
        self.send(snap);
    }

    fn remember(&mut self, cmd: &Command) {
        match cmd {
            Command::Pause => self.paused = true,
            Command::Resume => self.paused = false,
            Command::TogglePause => self.paused = !self.paused,
            Command::SetRate(r) => self.rate = Some(*r),
            Command::Stop => self.stopped = true,
        }
    }

    fn publish(&mut self, snap: &Snapshot, phase: &Phase, last_phase: bool) {
        let mut s = self.decorate(snap, phase, last_phase);
        s.elapsed = self.offset + snap.elapsed;
        self.send(s);
    }

    fn send(&mut self, mut snap: Snapshot) {
        self.seq += 1;
        snap.seq = self.seq;
        snap.finished_phases = Arc::new(self.finished.clone());
        let snap = Arc::new(snap);
        self.last = snap.clone();
        self.out.send_replace(snap);
    }

    /// `snap` with the phase and bytes; confirmations are counted once each, as they arrive (the
    /// Confirmed queue only grows), so this costs nothing per tracked transaction.
    fn decorate(&mut self, snap: &Snapshot, phase: &Phase, last_phase: bool) -> Snapshot {
        let confirmed = &snap.queues[Queue::Confirmed as usize];
        while self.counted < confirmed.len() {
            if let Some(id) = confirmed.get(self.counted) {
                self.confirmed_bytes += phase.bytes.get(*id as usize).copied().unwrap_or(0);
            }
            self.counted += 1;
        }
        let mut s = snap.clone();
        s.phase = Some(PhaseView {
            name: phase.name.into(),
            step: phase.step,
            steps: phase.steps,
            bytes_done: (phase.bytes_before + self.confirmed_bytes).min(phase.bytes_total),
            bytes_total: phase.bytes_total,
        });
        if !last_phase && s.run == RunState::Done {
            // One phase is done, the deploy is not.
            s.run = RunState::Running;
        }
        s
    }
}

/// What the dashboard shows before the first engine publishes: the cluster and nothing else.
pub fn blank_snapshot(cfg: &EngineConfig) -> Snapshot {
    Snapshot::blank(
        cfg.rpc_url_display.clone(),
        cfg.commitment.as_str(),
        cfg.identity,
        cfg.rate,
    )
}

async fn recv(rx: &mut Option<mpsc::UnboundedReceiver<Command>>) -> Option<Command> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::fixtures;
    use tokio::sync::oneshot;

    /// An engine that publishes `running`, then ends with `last` when told to; it hands back
    /// every command it received.
    fn fake_engine(
        running: Snapshot,
        last: Snapshot,
    ) -> (
        EngineHandle,
        oneshot::Sender<()>,
        oneshot::Receiver<Vec<Command>>,
    ) {
        let (cmd_tx, mut cmd_rx) = mpsc::unbounded_channel();
        let (snap_tx, snap_rx) = watch::channel(Arc::new(running.clone()));
        let (end_tx, end_rx) = oneshot::channel::<()>();
        let (seen_tx, seen_rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            snap_tx.send_replace(Arc::new(running));
            let _ = end_rx.await;
            let mut seen = Vec::new();
            while let Ok(c) = cmd_rx.try_recv() {
                seen.push(c);
            }
            let _ = seen_tx.send(seen);
            RunOutcome {
                snapshot: Arc::new(last),
                commitments: Vec::new(),
            }
        });
        let handle = EngineHandle {
            commands: cmd_tx,
            snapshots: snap_rx,
            task,
        };
        (handle, end_tx, seen_rx)
    }

    fn phase(step: u8, bytes_before: u64, n: usize) -> Phase {
        Phase {
            name: if step == 1 { "writes" } else { "deploy" },
            step,
            steps: 2,
            bytes_before,
            bytes: (0..n as u64).map(|i| 100 + i).collect::<Vec<_>>().into(),
            bytes_total: 1_000_000,
        }
    }

    #[tokio::test]
    async fn phases_carry_bytes_time_and_the_users_choices_and_end_done_once() {
        let (mut relay, mut ends) = Relay::new(Arc::new(fixtures::empty()), false);
        let running = fixtures::running(30);
        let confirmed: u64 = running.queues[Queue::Confirmed as usize]
            .iter()
            .map(|id| 100 + u64::from(*id))
            .sum();
        assert!(confirmed > 0);

        let (engine, end, seen) = fake_engine(running.clone(), fixtures::done(30));
        let writes = phase(1, 5_000, 30);
        let run = tokio::spawn(async move {
            let out = relay.run(&writes, engine, false).await;
            (relay, out)
        });
        let mut snap = ends.snapshots.borrow_and_update().clone();
        while snap.phase.is_none() {
            ends.snapshots.changed().await.unwrap();
            snap = ends.snapshots.borrow_and_update().clone();
        }
        let p = snap.phase.clone().unwrap();
        assert_eq!(&*p.name, "writes");
        assert_eq!((p.step, p.steps), (1, 2));
        assert_eq!(p.bytes_done, 5_000 + confirmed);
        ends.commands.send(Command::TogglePause).unwrap();
        ends.commands
            .send(Command::SetRate(RateTarget::Fixed(55.0)))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        end.send(()).unwrap();
        let (mut relay, out) = run.await.unwrap();
        assert_eq!(out.unwrap().snapshot.run, RunState::Done);
        let got = seen.await.unwrap();
        assert_eq!(
            got,
            vec![
                Command::Resume,
                Command::TogglePause,
                Command::SetRate(RateTarget::Fixed(55.0))
            ]
        );
        // The writes engine is done, the deploy is not.
        let between = ends.snapshots.borrow_and_update().clone();
        assert_eq!(between.run, RunState::Running);
        let first_elapsed = fixtures::done(30).elapsed;
        assert_eq!(between.elapsed, first_elapsed);

        // Between phases (checks before the deploy): the next phase, none of the old counts.
        let last = phase(2, 900_000, 1);
        relay.announce(&last);
        let shown = ends.snapshots.borrow_and_update().clone();
        assert_eq!(shown.counts.total, 0);
        assert_eq!(shown.run, RunState::Running);
        assert_eq!(shown.phase.as_ref().map(|p| p.bytes_done), Some(900_000));

        let (engine, end, seen) = fake_engine(fixtures::running(1), fixtures::done(1));
        end.send(()).unwrap();
        let out = relay.run(&last, engine, true).await.unwrap();
        assert_eq!(out.snapshot.run, RunState::Done);
        // The pause and the rate carried over to the next engine.
        assert_eq!(
            seen.await.unwrap()[..2],
            [Command::SetRate(RateTarget::Fixed(55.0)), Command::Pause]
        );
        let end_snap = ends.snapshots.borrow_and_update().clone();
        assert_eq!(end_snap.run, RunState::Done);
        assert_eq!(end_snap.elapsed, first_elapsed + fixtures::done(1).elapsed);
        assert_eq!(end_snap.phase.as_ref().map(|p| p.step), Some(2));
        assert!(end_snap.seq > between.seq);
    }
}
