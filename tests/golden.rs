//! Data written by an earlier version still reads, on every durable store: a SQLite
//! store as `serve` wrote it at schema 2 (`tests/fixtures/store-schema-2.sql`) and a
//! PostgreSQL one at its schema 1 (`postgres-schema-1.sql`; how both were made in the
//! fixtures' README), opened and read by today's store — tasks, their event logs, the
//! messageId index, ListTasks, the runs with their headers, checkpoints and ends — and
//! written back the same.

use std::path::PathBuf;

use a2a::store::TaskQuery;
use a2a::types::*;
use a2a_orchestrator::host::detail::RunDetail;
use orchestrator_core::engine::{Checkpoint, RunState, StepState};
use orchestrator_store::StoreSpec;
use serde_json::Value;
use sqlx::Connection;

const DUMP: &str = include_str!("fixtures/store-schema-2.sql");
const COMPLETED: &str = "01a208b2-2e98-70e5-83a3-931120d59a25";
const WAITING: &str = "01a208b2-32bc-75ae-92b0-d137735c1d32";

const PG_DUMP: &str = include_str!("fixtures/postgres-schema-1.sql");
const PG_COMPLETED: &str = "01a20903-ae7f-7305-8b30-f79783a25d08";
const PG_WAITING: &str = "01a20903-b2a3-779d-9dfd-c2291f1c7f4e";

/// What a run's row and its units' rows hold, read straight from the database: the
/// header, the end, and (step, item, checkpoint) sorted.
type StoredRun = (Value, Option<Value>, Vec<(String, i64, Value)>);

/// A database made from the dump, at a fresh path; its `sqlite://` URL.
async fn database(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(DUMP)
        .unwrap();
    format!("sqlite://{}", path.display())
}

#[tokio::test]
async fn a_sqlite_store_written_at_schema_2_reads_back_whole() {
    let url = database("golden-schema-2.db").await;
    reads_back_whole(&url, COMPLETED, WAITING).await;
    let path = url.trim_start_matches("sqlite://").to_owned();
    let conn = rusqlite::Connection::open(path).unwrap();
    for id in [COMPLETED, WAITING] {
        let mut rows = Vec::new();
        for run in [id.to_owned(), format!("{id}-copy")] {
            let (header, end): (String, Option<String>) = conn
                .query_row(
                    "SELECT header, run_end FROM runs WHERE id = ?1",
                    [&run],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            let units: Vec<(String, i64, String)> = conn
                .prepare("SELECT step, item, checkpoint FROM run_units WHERE run_id = ?1")
                .unwrap()
                .query_map([&run], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            rows.push(stored(header, end, units));
        }
        same_rows(id, &rows[0], &rows[1]);
    }
}

#[ignore = "needs PostgreSQL: the full suite, `cargo xtask test`"]
#[tokio::test]
async fn a_postgres_store_written_at_schema_1_reads_back_whole() {
    let pg = crate::util::postgres::Cluster::shared();
    let url = pg.database("golden").await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(PG_DUMP).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    reads_back_whole(&url, PG_COMPLETED, PG_WAITING).await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    for id in [PG_COMPLETED, PG_WAITING] {
        let mut rows = Vec::new();
        for run in [id.to_owned(), format!("{id}-copy")] {
            let (header, end): (String, Option<String>) =
                sqlx::query_as("SELECT header, run_end FROM runs WHERE id = $1")
                    .bind(&run)
                    .fetch_one(&mut conn)
                    .await
                    .unwrap();
            let units: Vec<(String, i64, String)> =
                sqlx::query_as("SELECT step, item, checkpoint FROM run_units WHERE run_id = $1")
                    .bind(&run)
                    .fetch_all(&mut conn)
                    .await
                    .unwrap();
            rows.push(stored(header, end, units));
        }
        same_rows(id, &rows[0], &rows[1]);
    }
}

fn stored(header: String, end: Option<String>, units: Vec<(String, i64, String)>) -> StoredRun {
    let json = |s: &str| serde_json::from_str::<Value>(s).unwrap();
    let mut units: Vec<_> = units
        .iter()
        .map(|(s, i, c)| (s.clone(), *i, json(c)))
        .collect();
    units.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    (json(&header), end.as_deref().map(json), units)
}

/// A run and its copy stored by today's store hold the same JSON in every column.
fn same_rows(id: &str, original: &StoredRun, copy: &StoredRun) {
    let mut header = original.0.clone();
    header["run_id"] = format!("{id}-copy").into();
    assert_eq!(header, copy.0, "{id}: the header");
    assert_eq!(original.1, copy.1, "{id}: the end");
    assert!(!original.2.is_empty());
    assert_eq!(original.2, copy.2, "{id}: the checkpoints");
}

/// Reads the fixture's store at `url` with today's store and checks everything in it;
/// then stores a copy of each run under `{id}-copy` for the caller to compare.
async fn reads_back_whole(url: &str, completed: &str, waiting: &str) {
    let store = StoreSpec::parse(url).unwrap().open().await.unwrap();

    // The completed task: its snapshot, its event log, its run's detail.
    let (done, seq) = store.get(&TaskId::new(completed)).await.unwrap().unwrap();
    assert_eq!(done.state(), TaskState::Completed);
    let result = done
        .artifacts
        .iter()
        .find(|a| a.artifact_id.as_str() == "result")
        .expect("the result artifact");
    assert!(parts_text(&result.parts).contains("Rome"), "{result:?}");
    let events = store.events_after(&TaskId::new(&done.id), 0).await.unwrap();
    assert_eq!(events.len() as u64, seq, "every event of the log reads");
    assert!(matches!(
        &*events.last().unwrap().1,
        StreamEvent::StatusUpdate(u) if u.status().state() == TaskState::Completed
    ));
    let detail = RunDetail::of_metadata(done.metadata.as_deref()).expect("the run detail");
    assert_eq!(detail.workflow, "travel-planning");
    assert!(detail.steps.iter().all(|s| s.state == StepState::Completed));
    assert_eq!(
        store.task_of_message("golden-1").await.unwrap(),
        Some(TaskId::new(&done.id)),
        "the messageId index"
    );

    // The waiting one: unfinished, found by ListTasks's state filter.
    let unfinished = store.unfinished().await.unwrap();
    let ids: Vec<&str> = unfinished.iter().map(|(t, _)| t.id.as_str()).collect();
    assert_eq!(ids, [waiting]);
    assert_eq!(unfinished[0].0.state(), TaskState::InputRequired);
    let page = store
        .list(&TaskQuery {
            state: Some(a2a::types::TaskState::InputRequired),
            limit: 10,
            ..TaskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), 1);
    assert_eq!(page.tasks[0].id.as_str(), waiting);

    // The runs: headers, checkpoints (done and sent), ends.
    let run = store.load_run(completed).await.unwrap().unwrap();
    assert_eq!(run.header.workflow_id, "travel-planning");
    assert_eq!(run.header.inputs["destination"], "Rome");
    assert!(run.header.workflow_source.contains("[workflow]"));
    assert_eq!(run.end.as_ref().unwrap().state, RunState::Completed);
    let flights = &run.units[&("flights".to_owned(), None)];
    let Checkpoint::Done(record) = flights else {
        panic!("{flights:?}")
    };
    assert_eq!(record.state, StepState::Completed);
    assert_eq!(record.agent.as_deref(), Some("flights"));
    assert_eq!(record.attempts, 1);
    assert!(!record.outputs.artifacts.is_empty());
    let waiting_run = store.load_run(waiting).await.unwrap().unwrap();
    assert!(waiting_run.end.is_none());
    match &waiting_run.units[&("hotel".to_owned(), None)] {
        Checkpoint::Sent { task_id, agent, .. } => {
            assert!(task_id.is_some(), "the hotel's task is known");
            assert_eq!(agent.as_deref(), Some("hotels"));
        }
        other => panic!("the hotel step: {other:?}"),
    }
    assert!(matches!(
        &waiting_run.units[&("book_tours".to_owned(), Some(2))],
        Checkpoint::Done(r) if r.state == StepState::Completed
    ));

    // Today's store writes what it read exactly as it was written: a copy of each run,
    // stored again under a new id, has the same JSON in every column.
    for id in [completed, waiting] {
        let run = store.load_run(id).await.unwrap().unwrap();
        let copy = format!("{id}-copy");
        let mut header = run.header.clone();
        header.run_id = copy.clone();
        store.create_run(&header).await.unwrap();
        for ((step, item), c) in &run.units {
            store.save_unit(&copy, step, *item, c).await.unwrap();
        }
        if let Some(end) = &run.end {
            store.finish_run(&copy, end).await.unwrap();
        }
    }
    store.flush().await.unwrap();
}
