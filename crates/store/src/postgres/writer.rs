//! Group commit: a replica's writes for its tasks and runs, queued and committed
//! together. PostgreSQL commits each transaction with a flush of its WAL; one
//! transaction for every event, checkpoint and snapshot made it the slowest store (25
//! transactions a diamond run). Here one dispatcher takes whatever is queued and
//! commits it in one statement ([`super::bulk`]), so a batch costs one round trip
//! whatever its size. Fencing is still checked write by write, inside the statement:
//! a write refused for its fence (another replica runs the task now) writes nothing and
//! says so, and the others in the batch commit.
//!
//! One batch at a time, while that keeps up: each batch is a call with its own fixed
//! cost on both sides (the function's statements set up, a commit, a WAL flush), so the
//! fewer and larger the batches, the less each write costs; after a busy batch the
//! next waits a millisecond for more ([`hold_after`]). When a full batch waits
//! while one is in flight, another goes on a connection of its own, up to [`LANES`]
//! at once: writes for a task or its run (the same id) are never in two batches in
//! flight, so they keep their order. A batch that fails as a whole is tried again
//! write by write, so each caller learns its own outcome; one that cannot get a
//! connection fails every write in it at once, as each would have.
//!
//! A write only queued (nobody waits for it: [`Writer::queue`]) that fails is kept, and
//! made again in the same transaction as the next write for its task or run ([`Unstored`]):
//! whatever of a task's or a run's is stored, so is every write queued for it before.
//! So a write that is waited for vouches for those queued before it, and these need not
//! be waited for on their own (a run's header and end, a step's result). A kept write
//! whose task and run write nothing more is not left to the next stop's flush: the
//! kept writes are tried again every [`RETRY`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use sqlx::PgConnection;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgPool, Postgres};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::warn;

use super::bulk::{Events, Round, RunRow, RunWrite, Snapshot, Unit, write_round};
use crate::WriteError;

/// Batches in flight at most, each on its own connection. One while it keeps up (on
/// the benchmark's diamond, two side by side cost 12% more CPU a run and did not run
/// faster: each made half the batch for the same fixed cost); more when a full batch
/// waits, for a database with cores to spare.
const LANES: usize = 4;

/// Most writes committed in one transaction; also how many wait before another batch
/// goes beside the one in flight.
const MAX_BATCH: usize = 256;

/// Writes queued at most before a caller waits to queue.
const QUEUE: usize = 4096;

/// A batch at least this large says the replica is busy: the next one then waits
/// [`LINGER`] for more writes before it goes (see [`hold_after`]).
const BUSY_BATCH: usize = 32;

/// How long the next batch waits after a busy one: the writes that come meanwhile share
/// its fixed cost. On the benchmark's diamond at c64 (batches of ~60 writes), 1 ms took
/// a tenth off PostgreSQL's CPU a run and ~5% off the machine's, with runs a second no
/// lower; 2 ms did no better.
const LINGER: Duration = Duration::from_millis(1);

/// How often writes kept after failing ([`Unstored`]) are tried again on their own (in
/// the batch of a flush nobody waits for): what no later write of its task or run
/// carries (a run whose task is gone quiet, a replica's last writes before the
/// database went away) is stored once the database is back.
const RETRY: Duration = Duration::from_secs(1);

/// One write for a task or a run.
#[derive(Debug, Clone)]
pub(super) enum Write {
    Snapshot(Snapshot),
    Events(Events),
    Unit(Unit),
    Run(RunWrite, RunRow),
}

impl Write {
    /// Which writes must not share a round of a batch: a task's commits, a run's
    /// writes (a unit's checkpoints are merged instead).
    fn key(&self) -> Option<(u8, &str)> {
        match self {
            Write::Snapshot(_) | Write::Events(_) => Some((0, self.owner_id())),
            Write::Run(..) => Some((1, self.owner_id())),
            Write::Unit(_) => None,
        }
    }

    /// The task, or the run, the write is for (a run's id is its task's): its writes
    /// are never in two batches in flight at once.
    fn owner_id(&self) -> &str {
        match self {
            Write::Snapshot(c) => &c.id,
            Write::Events(c) => &c.id,
            Write::Run(_, r) => &r.id,
            Write::Unit(u) => &u.run,
        }
    }
}

/// A write queued, with where its outcome (the rows it wrote) goes; none: a flush,
/// answered once every write queued before it is committed.
struct Op {
    write: Option<Write>,
    done: oneshot::Sender<Result<u64, WriteError>>,
    /// Nobody waits for the outcome ([`Writer::queue`]): should the write fail, it is
    /// kept for the next write of its task or run ([`Unstored`]).
    queued: bool,
}

/// The replica's writer. Cheap to clone; the dispatcher ends when the last clone is
/// dropped, once everything queued is committed (a graceful stop flushes first).
#[derive(Clone)]
pub(super) struct Writer {
    queue: mpsc::Sender<Op>,
}

impl Writer {
    /// Starts the writer of replica `replica`.
    pub(super) fn start(pool: &PgPool, replica: &Arc<str>, observe: crate::Observe) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE);
        // Ends when its queue closes: when the last handle is dropped, once what was
        // queued is committed.
        tokio::spawn(dispatch(pool.clone(), replica.clone(), rx, observe));
        Self { queue }
    }

    /// Queues `write` and waits until it is committed; the rows it wrote (0: refused
    /// for its fence, or nothing to change).
    pub(super) async fn write(&self, write: Write) -> Result<u64, WriteError> {
        let (done, rx) = oneshot::channel();
        self.queue
            .send(Op {
                write: Some(write),
                done,
                queued: false,
            })
            .await
            .map_err(|_| WriteError::Closed)?;
        rx.await.map_err(|_| WriteError::Closed)?
    }

    /// Queues `write` without waiting for it to be committed. Should it fail, it is
    /// made again with the next write for its task or run, in that write's transaction:
    /// that write, waited for, is stored only with it.
    pub(super) async fn queue(&self, write: Write) -> Result<(), WriteError> {
        let (done, _) = oneshot::channel();
        self.queue
            .send(Op {
                write: Some(write),
                done,
                queued: true,
            })
            .await
            .map_err(|_| WriteError::Closed)
    }

    /// Returns once every write queued before the call is committed (or has failed).
    pub(super) async fn flush(&self) -> Result<(), WriteError> {
        let (done, rx) = oneshot::channel();
        self.queue
            .send(Op {
                write: None,
                done,
                queued: false,
            })
            .await
            .map_err(|_| WriteError::Closed)?;
        rx.await.map_err(|_| WriteError::Closed)??;
        Ok(())
    }
}

/// Takes queued writes into batches and commits them until every handle is gone.
async fn dispatch(
    pool: PgPool,
    replica: Arc<str>,
    mut rx: mpsc::Receiver<Op>,
    observe: crate::Observe,
) {
    // Each lane's connection, kept from batch to batch: a pooled connection is tested
    // with a round trip each time it goes back to the pool. Given back when it fails
    // (the pool then tests and drops it), taken again for the next batch.
    let mut idle: Vec<Held> = (0..LANES)
        .map(|_| Held {
            pool: pool.clone(),
            conn: None,
        })
        .collect();
    let mut running = FuturesUnordered::new();
    let mut pending: VecDeque<Op> = VecDeque::new();
    // The tasks and runs of the batches in flight.
    let mut in_flight: HashSet<String> = HashSet::new();
    let mut received = Vec::with_capacity(MAX_BATCH);
    let mut unstored = Unstored::default();
    let mut open = true;
    // Until when the next batch waits for more writes (after a busy one).
    let mut hold: Option<Instant> = None;
    // When the kept writes are next tried on their own.
    let mut retry = Instant::now() + RETRY;
    loop {
        if hold.is_some_and(|until| Instant::now() >= until) || pending.len() >= MAX_BATCH {
            hold = None;
        }
        while hold.is_none()
            && !pending.is_empty()
            && (running.is_empty() || pending.len() >= MAX_BATCH)
        {
            let Some(held) = idle.pop() else { break };
            let ops = take_batch(&mut pending, &in_flight);
            if ops.is_empty() {
                idle.push(held);
                break;
            }
            let ops = unstored.before(ops);
            let ids: Vec<String> = ops
                .iter()
                .filter_map(|op| op.write.as_ref())
                .map(|w| w.owner_id().to_owned())
                .collect();
            in_flight.extend(ids.iter().cloned());
            let (replica, observe) = (replica.clone(), observe.clone());
            running.push(async move {
                let mut held = held;
                let size = ops.len();
                let failed = commit(&mut held, &replica, ops, &observe).await;
                (held, ids, size, failed)
            });
        }
        if !open && pending.is_empty() && running.is_empty() {
            if !unstored.is_empty() {
                warn!(
                    writes = unstored.len(),
                    "the store's writer stops with queued writes it could not store"
                );
            }
            return;
        }
        tokio::select! {
            n = rx.recv_many(&mut received, MAX_BATCH), if open && pending.len() < QUEUE => {
                if n == 0 {
                    open = false;
                }
                pending.extend(received.drain(..));
            }
            Some((held, ids, size, failed)) = running.next(), if !running.is_empty() => {
                for id in &ids {
                    in_flight.remove(id);
                }
                unstored.keep(failed);
                idle.push(held);
                if running.is_empty() {
                    hold = hold_after(size, pending.len()).map(|wait| Instant::now() + wait);
                }
            }
            () = tokio::time::sleep_until(hold.unwrap_or_else(Instant::now)), if hold.is_some() => {
                hold = None;
            }
            () = tokio::time::sleep_until(retry), if !unstored.is_empty() => {
                retry = Instant::now() + RETRY;
                if !pending.iter().any(|op| op.write.is_none()) {
                    // A flush nobody waits for: it goes once nothing before it is in
                    // flight, and its batch carries every kept write.
                    let (done, _) = oneshot::channel();
                    pending.push_back(Op {
                        write: None,
                        done,
                        queued: false,
                    });
                }
            }
        }
    }
}

/// How long the next batch waits for more writes once the last one in flight, of
/// `size` writes, is committed and `pending` wait: [`LINGER`] after a busy batch, while
/// fewer than a full batch wait; not at all otherwise, so that a replica that is not
/// busy commits each write at once.
fn hold_after(size: usize, pending: usize) -> Option<Duration> {
    (size >= BUSY_BATCH && pending > 0 && pending < MAX_BATCH).then_some(LINGER)
}

/// Takes the next batch from `pending`, in order: up to [`MAX_BATCH`] writes, none for
/// a task or run in a batch in flight, nor after one left behind for that (so that a
/// task's writes keep their order). A flush goes only when no write is in flight and
/// nothing before it is left behind: once the batch commits, so has every write queued
/// before it.
fn take_batch(pending: &mut VecDeque<Op>, in_flight: &HashSet<String>) -> Vec<Op> {
    let mut batch = Vec::new();
    let mut left: VecDeque<Op> = VecDeque::new();
    let mut held_back: HashSet<String> = HashSet::new();
    while let Some(op) = pending.pop_front() {
        if batch.len() == MAX_BATCH {
            left.push_back(op);
            break;
        }
        let go = match &op.write {
            Some(w) => {
                let id = w.owner_id();
                let go = !in_flight.contains(id) && !held_back.contains(id);
                if !go {
                    held_back.insert(id.to_owned());
                }
                go
            }
            None => in_flight.is_empty() && left.is_empty(),
        };
        if go {
            batch.push(op);
        } else {
            left.push_back(op);
        }
    }
    left.append(pending);
    *pending = left;
    batch
}

/// Commits `ops` on `held`'s connection and answers each; the queued writes that
/// failed, in order, to be made again with their task's or run's next write.
async fn commit(held: &mut Held, replica: &str, ops: Vec<Op>, observe: &crate::Observe) -> Vec<Op> {
    let writes: Vec<&Write> = ops.iter().filter_map(|op| op.write.as_ref()).collect();
    let alone = writes.len() == 1;
    let started = std::time::Instant::now();
    let outcome = apply_batch(held, replica, &writes).await;
    observe.committed(started.elapsed());
    let mut failed = Vec::new();
    match outcome {
        Ok(rows) => {
            let mut rows = rows.into_iter();
            for op in ops {
                let n = match op.write {
                    Some(_) => rows.next().unwrap_or(0),
                    None => 0,
                };
                let _ = op.done.send(Ok(n));
            }
        }
        Err(Failed::Connection(e)) => {
            // No connection, or it went: each write alone would fail the same way.
            let e = WriteError::from(e);
            warn!(error = %e, "store writes failed: no connection to the database");
            for op in ops {
                answer(op, Err(e.clone()), &mut failed);
            }
        }
        Err(Failed::Statement(e)) if alone => {
            let e = WriteError::from(e);
            for op in ops {
                let r = if op.write.is_some() {
                    Err(e.clone())
                } else {
                    Ok(0)
                };
                if op.queued {
                    warn!(error = %e, "a queued store write failed; it is made again with the next write for its task");
                }
                answer(op, r, &mut failed);
            }
        }
        Err(Failed::Statement(e)) => {
            // Something in the batch failed: each write again on its own, so each
            // caller learns its own outcome.
            warn!(error = %e, "a batched store write failed; retrying writes one by one");
            let mut lost: Option<WriteError> = None;
            // The tasks and runs with a queued write that failed: their later writes
            // are not made without it (they fail with its error, and it is kept).
            let mut broken: HashMap<String, WriteError> = HashMap::new();
            for op in ops {
                let r = match (&op.write, &lost) {
                    (None, _) => Ok(0),
                    // The connection went: the rest would wait for it in turn.
                    (Some(_), Some(e)) => Err(e.clone()),
                    (Some(w), None) => match broken.get(w.owner_id()) {
                        Some(e) => Err(e.clone()),
                        None => match apply_batch(held, replica, &[w]).await {
                            Ok(rows) => Ok(rows[0]),
                            Err(Failed::Statement(e)) => Err(WriteError::from(e)),
                            Err(Failed::Connection(e)) => {
                                let e = WriteError::from(e);
                                lost = Some(e.clone());
                                Err(e)
                            }
                        },
                    },
                };
                if let (Err(e), Some(w)) = (&r, &op.write)
                    && op.queued
                {
                    warn!(error = %e, "a queued store write failed; it is made again with the next write for its task");
                    broken.insert(w.owner_id().to_owned(), e.clone());
                }
                answer(op, r, &mut failed);
            }
        }
    }
    failed
}

/// Answers `op` with `outcome`; a queued write that failed goes to `failed` instead
/// (nobody waits to hear it: it is made again with its task's or run's next write).
fn answer(op: Op, outcome: Result<u64, WriteError>, failed: &mut Vec<Op>) {
    match outcome {
        Err(_) if op.queued && op.write.is_some() => failed.push(op),
        r => {
            let _ = op.done.send(r);
        }
    }
}

/// The queued writes that failed, kept by task or run (a run's id is its task's), each's
/// in the order queued. Made again before the next write for their task or run, in its
/// batch (one transaction): a write waited for is stored only with them, so a caller
/// that hears it was stored knows they were too. Every one of them goes with a flush.
#[derive(Default)]
struct Unstored {
    by_owner: HashMap<String, Vec<Op>>,
}

impl Unstored {
    /// Keeps `failed`, in order, behind any kept before for the same task or run.
    fn keep(&mut self, failed: Vec<Op>) {
        for op in failed {
            if let Some(w) = &op.write {
                self.by_owner
                    .entry(w.owner_id().to_owned())
                    .or_default()
                    .push(op);
            }
        }
    }

    /// `batch` with the kept writes of its tasks and runs (all of them, when it holds
    /// a flush) before it.
    fn before(&mut self, batch: Vec<Op>) -> Vec<Op> {
        if self.by_owner.is_empty() {
            return batch;
        }
        let mut out = Vec::new();
        if batch.iter().any(|op| op.write.is_none()) {
            for (_, ops) in self.by_owner.drain() {
                out.extend(ops);
            }
        } else {
            for op in &batch {
                if let Some(w) = &op.write
                    && let Some(ops) = self.by_owner.remove(w.owner_id())
                {
                    out.extend(ops);
                }
            }
        }
        out.extend(batch);
        out
    }

    /// Whether no write is kept.
    fn is_empty(&self) -> bool {
        self.by_owner.is_empty()
    }

    /// How many writes are kept.
    fn len(&self) -> usize {
        self.by_owner.values().map(Vec::len).sum()
    }
}

/// Why a batch failed.
enum Failed {
    /// No connection could be had, or the transaction could not begin or end.
    Connection(sqlx::Error),
    /// A statement in it failed (and with it the transaction).
    Statement(sqlx::Error),
}

/// Whether `e` is the connection's failure, not the statement's: every other write
/// would meet it too.
fn is_connection(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
    )
}

/// What failed a batch: the connection, or one of its statements.
fn failed(e: sqlx::Error) -> Failed {
    if is_connection(&e) {
        Failed::Connection(e)
    } else {
        Failed::Statement(e)
    }
}

/// A round of a batch: the writes (by index) one statement makes.
#[derive(Default)]
struct Planned {
    /// Each unit's last checkpoint, with the writes it answers.
    units: Vec<(usize, Vec<usize>)>,
    /// Tasks' and runs' writes.
    writes: Vec<usize>,
}

/// The rounds that make `writes`, in order: units' checkpoints go with the first; in
/// each round tasks' snapshots and events are written before runs' headers, cancels and
/// ends. That order is safe because each call for a task or a run waits for the one
/// before, except checkpoints, which may be queued unwaited: a run's header is waited
/// for before its first checkpoint, and its end comes after its last. Should a task or
/// a run have two writes in one batch, the second goes in a later round; of two
/// checkpoints of one unit the later is stored, and answers for both.
fn plan(writes: &[&Write]) -> Vec<Planned> {
    let mut rounds: Vec<Planned> = Vec::new();
    let mut round_of: HashMap<(u8, &str), usize> = HashMap::new();
    let mut units: HashMap<(&str, &str, i64), (usize, Vec<usize>)> = HashMap::new();
    for (i, write) in writes.iter().enumerate() {
        if let Write::Unit(u) = write {
            let entry = units
                .entry((&u.run, &u.step, u.item))
                .or_insert((i, Vec::new()));
            entry.0 = i;
            entry.1.push(i);
        } else if let Some(key) = write.key() {
            let round = *round_of.entry(key).and_modify(|r| *r += 1).or_insert(0);
            if rounds.len() <= round {
                rounds.push(Planned::default());
            }
            rounds[round].writes.push(i);
        }
    }
    if !units.is_empty() {
        if rounds.is_empty() {
            rounds.push(Planned::default());
        }
        rounds[0].units = units.into_values().collect();
    }
    rounds
}

/// Commits `writes` (one round: one statement, its own transaction; more: in one
/// transaction); the rows each wrote (1, or 0 when refused for its fence or there was
/// nothing to change).
async fn apply_batch(
    held: &mut Held,
    replica: &str,
    writes: &[&Write],
) -> Result<Vec<u64>, Failed> {
    let rounds = plan(writes);
    let rows = vec![0; writes.len()];
    if rounds.is_empty() {
        // Flushes only: nothing to write, nothing to wait for.
        return Ok(rows);
    }
    let conn = match &mut held.conn {
        Some(conn) => conn,
        None => held
            .conn
            .insert(held.pool.acquire().await.map_err(Failed::Connection)?),
    };
    let outcome = write_rounds(conn, replica, writes, &rounds, rows).await;
    if let Err(Failed::Connection(_)) = outcome {
        held.conn = None;
    }
    outcome
}

/// A writer's connection, when it has one.
struct Held {
    pool: PgPool,
    conn: Option<PoolConnection<Postgres>>,
}

/// Makes a batch's `rounds` on `conn`.
async fn write_rounds(
    conn: &mut PgConnection,
    replica: &str,
    writes: &[&Write],
    rounds: &[Planned],
    mut rows: Vec<u64>,
) -> Result<Vec<u64>, Failed> {
    if let [round] = rounds {
        write_planned(conn, replica, writes, round, &mut rows).await?;
        return Ok(rows);
    }
    let mut tx = sqlx::Connection::begin(conn)
        .await
        .map_err(Failed::Connection)?;
    for round in rounds {
        write_planned(&mut tx, replica, writes, round, &mut rows).await?;
    }
    tx.commit().await.map_err(Failed::Connection)?;
    Ok(rows)
}

/// Makes one round of a batch, setting the rows of the writes it made.
async fn write_planned(
    conn: &mut PgConnection,
    replica: &str,
    writes: &[&Write],
    planned: &Planned,
    rows: &mut [u64],
) -> Result<(), Failed> {
    let mut round = Round::default();
    for (last, _) in &planned.units {
        if let Write::Unit(u) = writes[*last] {
            round.units.push(u);
        }
    }
    for i in &planned.writes {
        match writes[*i] {
            Write::Snapshot(c) => round.snapshots.push(c),
            Write::Events(c) => round.events.push(c),
            Write::Run(what, r) => round.runs.push((*what, r)),
            Write::Unit(_) => {}
        }
    }
    let written = write_round(conn, replica, &round).await.map_err(failed)?;
    for (last, answers) in &planned.units {
        let n = match writes[*last] {
            Write::Unit(u) => u64::from(written.units.contains(&(
                u.run.clone(),
                u.step.clone(),
                u.item,
            ))),
            _ => 0,
        };
        for i in answers {
            rows[*i] = n;
        }
    }
    for i in &planned.writes {
        rows[*i] = u64::from(match writes[*i] {
            Write::Snapshot(c) => written.tasks.contains(&c.id),
            Write::Events(c) => written.tasks.contains(&c.id),
            Write::Run(what, r) => written.runs.contains(&(*what, r.id.clone())),
            Write::Unit(_) => false,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(id: &str) -> (Op, oneshot::Receiver<Result<u64, WriteError>>) {
        let (done, rx) = oneshot::channel();
        let write = Write::Events(Events {
            id: id.to_owned(),
            state: "working".to_owned(),
            status_ms: 0,
            fence: 1,
            events: Vec::new(),
        });
        let op = Op {
            write: Some(write),
            done,
            queued: false,
        };
        (op, rx)
    }

    fn queued(id: &str) -> Op {
        Op {
            queued: true,
            ..op(id).0
        }
    }

    fn flush() -> Op {
        Op {
            write: None,
            done: oneshot::channel().0,
            queued: false,
        }
    }

    #[test]
    fn a_batch_waits_for_more_writes_only_after_a_busy_one() {
        // A replica that is not busy: each write goes at once.
        assert_eq!(hold_after(1, 1), None);
        assert_eq!(hold_after(BUSY_BATCH - 1, 10), None);
        // Busy: the next batch waits, unless nothing waits or a full batch does.
        assert_eq!(hold_after(BUSY_BATCH, 10), Some(LINGER));
        assert_eq!(hold_after(MAX_BATCH, 1), Some(LINGER));
        assert_eq!(hold_after(MAX_BATCH, 0), None);
        assert_eq!(hold_after(BUSY_BATCH, MAX_BATCH), None);
    }

    fn ids(ops: &[Op]) -> Vec<&str> {
        ops.iter()
            .map(|op| op.write.as_ref().map_or("flush", |w| w.owner_id()))
            .collect()
    }

    #[test]
    fn a_batch_leaves_the_writes_of_a_task_in_flight_and_those_after_them() {
        let mut pending: VecDeque<Op> = ["a", "b", "a", "c", "b"]
            .into_iter()
            .map(|id| op(id).0)
            .collect();
        pending.push_back(flush());
        let in_flight = HashSet::from(["b".to_owned()]);
        let batch = take_batch(&mut pending, &in_flight);
        assert_eq!(ids(&batch), ["a", "a", "c"]);
        // What is left keeps its order, the flush behind the writes before it.
        assert_eq!(ids(pending.make_contiguous()), ["b", "b", "flush"]);
        // Once `b`'s batch is in, the rest goes, the flush last.
        let batch = take_batch(&mut pending, &HashSet::new());
        assert_eq!(ids(&batch), ["b", "b", "flush"]);
        assert!(pending.is_empty());
    }

    #[test]
    fn a_flush_waits_for_every_write_in_flight() {
        let mut pending: VecDeque<Op> = VecDeque::from([flush(), op("a").0]);
        let batch = take_batch(&mut pending, &HashSet::from(["z".to_owned()]));
        assert_eq!(
            ids(&batch),
            ["a"],
            "writes after a flush need not wait for it"
        );
        assert_eq!(ids(pending.make_contiguous()), ["flush"]);
        let batch = take_batch(&mut pending, &HashSet::new());
        assert_eq!(ids(&batch), ["flush"]);
    }

    #[test]
    fn a_batch_holds_at_most_max_batch_writes() {
        let mut pending: VecDeque<Op> =
            (0..MAX_BATCH + 3).map(|i| op(&format!("t{i}")).0).collect();
        let batch = take_batch(&mut pending, &HashSet::new());
        assert_eq!(batch.len(), MAX_BATCH);
        assert_eq!(ids(pending.make_contiguous()), ["t256", "t257", "t258"]);
    }

    #[test]
    fn a_queued_write_that_failed_goes_before_the_next_write_of_its_task() {
        let mut unstored = Unstored::default();
        unstored.keep(vec![queued("a"), queued("b"), queued("a")]);
        assert_eq!(unstored.len(), 3);
        // Nothing kept for `c`: its batch goes as it is.
        let batch = unstored.before(vec![op("c").0]);
        assert_eq!(ids(&batch), ["c"]);
        // `a`'s next write takes `a`'s kept writes before it, in their order, into the
        // same batch; `b`'s stay kept.
        let batch = unstored.before(vec![op("c").0, op("a").0]);
        assert_eq!(ids(&batch), ["a", "a", "c", "a"]);
        assert!(batch[0].queued && batch[1].queued && !batch[3].queued);
        assert_eq!(unstored.len(), 1);
        // Failed again: kept again, behind nothing.
        unstored.keep(batch.into_iter().filter(|op| op.queued).collect());
        assert_eq!(unstored.len(), 3);
        // A flush takes every kept write with it.
        let batch = unstored.before(vec![flush()]);
        assert_eq!(batch.len(), 4);
        assert_eq!(ids(&batch).last(), Some(&"flush"));
        assert_eq!(unstored.len(), 0);
    }

    #[test]
    fn a_queued_write_that_fails_is_kept_and_a_waited_one_is_answered() {
        let mut failed = Vec::new();
        let e = WriteError::Closed;
        answer(queued("a"), Err(e.clone()), &mut failed);
        let (waited, mut rx) = op("a");
        answer(waited, Err(e.clone()), &mut failed);
        assert_eq!(ids(&failed), ["a"], "the queued write is kept");
        assert!(matches!(rx.try_recv(), Ok(Err(WriteError::Closed))));
        // One that succeeded is answered, queued or not.
        answer(queued("b"), Ok(1), &mut failed);
        assert_eq!(failed.len(), 1);
    }
}
