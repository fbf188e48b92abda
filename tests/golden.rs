//! Data written by an earlier version still reads: a SQLite store as `serve` wrote it at
//! schema 2 (`tests/fixtures/store-schema-2.sql`, how it was made in the fixtures'
//! README), opened and read by today's store — tasks, their event logs, the messageId
//! index, ListTasks, the runs with their headers, checkpoints and ends.

use std::path::PathBuf;

use a2a_orchestrator::engine::{Checkpoint, RunState, StepState};
use a2a_orchestrator::host::detail::RunDetail;
use a2a_orchestrator::protocol::server::TaskQuery;
use a2a_orchestrator::protocol::types::*;
use a2a_orchestrator::store::StoreSpec;
use sqlx::Connection;

const DUMP: &str = include_str!("fixtures/store-schema-2.sql");
const COMPLETED: &str = "01a208b2-2e98-70e5-83a3-931120d59a25";
const WAITING: &str = "01a208b2-32bc-75ae-92b0-d137735c1d32";

/// A database made from the dump, at a fresh path; its `sqlite://` URL.
async fn database(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let mut conn = sqlx::SqliteConnection::connect_with(&options)
        .await
        .unwrap();
    sqlx::raw_sql(DUMP).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    format!("sqlite://{}", path.display())
}

#[tokio::test]
async fn a_store_written_at_schema_2_reads_back_whole() {
    let url = database("golden-schema-2.db").await;
    let store = StoreSpec::parse(&url).unwrap().open().await.unwrap();

    // The completed task: its snapshot, its event log, its run's detail.
    let (done, seq) = store.get(&TaskId::new(COMPLETED)).await.unwrap().unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let result = done
        .artifacts
        .iter()
        .find(|a| a.artifact_id.as_str() == "result")
        .expect("the result artifact");
    assert!(parts_text(&result.parts).contains("Rome"), "{result:?}");
    let events = store.events_after(&done.id, 0).await.unwrap();
    assert_eq!(events.len() as u64, seq, "every event of the log reads");
    assert!(matches!(
        &*events.last().unwrap().1,
        StreamEvent::StatusUpdate(u) if u.status.state == TaskState::Completed
    ));
    let detail = RunDetail::of_metadata(done.metadata.as_ref()).expect("the run detail");
    assert_eq!(detail.workflow, "travel-planning");
    assert!(detail.steps.iter().all(|s| s.state == StepState::Completed));
    assert_eq!(
        store.task_of_message("golden-1").await.unwrap(),
        Some(done.id.clone()),
        "the messageId index"
    );

    // The waiting one: unfinished, found by ListTasks's state filter.
    let unfinished = store.unfinished().await.unwrap();
    let ids: Vec<&str> = unfinished.iter().map(|(t, _)| t.id.as_str()).collect();
    assert_eq!(ids, [WAITING]);
    assert_eq!(unfinished[0].0.status.state, TaskState::InputRequired);
    let page = store
        .list(&TaskQuery {
            state: Some(TaskState::InputRequired),
            limit: 10,
            ..TaskQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), 1);
    assert_eq!(page.tasks[0].id.as_str(), WAITING);

    // The runs: headers, checkpoints (done and sent), ends.
    let run = store.load_run(COMPLETED).await.unwrap().unwrap();
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
    let waiting = store.load_run(WAITING).await.unwrap().unwrap();
    assert!(waiting.end.is_none());
    match &waiting.units[&("hotel".to_owned(), None)] {
        Checkpoint::Sent { task_id, agent, .. } => {
            assert!(task_id.is_some(), "the hotel's task is known");
            assert_eq!(agent.as_deref(), Some("hotels"));
        }
        other => panic!("the hotel step: {other:?}"),
    }
    assert!(matches!(
        &waiting.units[&("book_tours".to_owned(), Some(2))],
        Checkpoint::Done(r) if r.state == StepState::Completed
    ));

    // Today's store writes what it read exactly as it was written: a copy of each run,
    // stored again under a new id, has the same JSON in every column.
    for id in [COMPLETED, WAITING] {
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
    drop(store);
    let path = url.trim_start_matches("sqlite://");
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
    let mut conn = sqlx::SqliteConnection::connect_with(&options)
        .await
        .unwrap();
    let json = |s: String| serde_json::from_str::<serde_json::Value>(&s).unwrap();
    for id in [COMPLETED, WAITING] {
        let copy = format!("{id}-copy");
        let runs: Vec<(String, Option<String>)> =
            sqlx::query_as("SELECT header, run_end FROM runs WHERE id = ?1 OR id = ?2 ORDER BY id")
                .bind(id)
                .bind(&copy)
                .fetch_all(&mut conn)
                .await
                .unwrap();
        let mut original = json(runs[0].0.clone());
        original["run_id"] = copy.clone().into();
        assert_eq!(original, json(runs[1].0.clone()), "{id}: the header");
        assert_eq!(
            runs[0].1.clone().map(json),
            runs[1].1.clone().map(json),
            "{id}: the end"
        );
        let units: Vec<(String, String, i64, String)> = sqlx::query_as(
            "SELECT run_id, step, item, checkpoint FROM run_units WHERE run_id = ?1 OR run_id = ?2",
        )
        .bind(id)
        .bind(&copy)
        .fetch_all(&mut conn)
        .await
        .unwrap();
        let of = |run: &str| {
            let mut u: Vec<(String, i64, serde_json::Value)> = units
                .iter()
                .filter(|(r, ..)| r == run)
                .map(|(_, s, i, c)| (s.clone(), *i, json(c.clone())))
                .collect();
            u.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
            u
        };
        assert!(!of(id).is_empty());
        assert_eq!(of(id), of(&copy), "{id}: the checkpoints");
    }
}
