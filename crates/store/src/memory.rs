//! The in-memory store: the protocol layer's task store and the engine's run store side
//! by side. Nothing survives the process; retention still bounds its size.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use futures::future::BoxFuture;

use super::Store;
use a2a::store::{
    InMemoryTaskStore, LoggedEvent, StoreError, StoredPushConfig, StoredTask, TaskPage, TaskQuery,
    TaskStore,
};
use a2a::types::TaskId;
use orchestrator_core::engine::{
    Checkpoint, MemoryRunStore, RunEnd, RunHeader, RunStore, RunStoreError, SavedRun,
};

/// Tasks and runs in process memory.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    tasks: InMemoryTaskStore,
    runs: MemoryRunStore,
    /// Each schedule's mark.
    marks: Arc<Mutex<HashMap<String, SystemTime>>>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self {
            tasks: InMemoryTaskStore::new().reporting_evictions(),
            runs: MemoryRunStore::new(),
            marks: Arc::default(),
        }
    }
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Store for MemoryStore {
    fn durable(&self) -> bool {
        false
    }

    fn prune_finished(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let removed = self.tasks.prune(before).await?;
            // A run shares its id with its upstream task: it goes when the task goes.
            self.runs
                .retain_finished(|id| self.tasks.contains(&TaskId::new(id)));
            Ok(removed)
        })
    }

    fn schedule_mark<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<SystemTime>, StoreError>> {
        let mark = self
            .marks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied();
        Box::pin(async move { Ok(mark) })
    }

    fn advance_schedule<'a>(
        &'a self,
        key: &'a str,
        to: SystemTime,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let mut marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        let moved = match marks.get(key) {
            Some(mark) if *mark >= to => false,
            _ => {
                marks.insert(key.to_owned(), to);
                true
            }
        };
        Box::pin(async move { Ok(moved) })
    }
}

impl MemoryStore {
    /// A run shares its id with its upstream task: a finished task dropped past the
    /// store's bounds takes its run with it, or the runs would fill memory.
    fn drop_evicted_runs(&self) {
        for id in self.tasks.take_evicted() {
            self.runs.remove_finished(id.as_str());
        }
    }
}

impl TaskStore for MemoryStore {
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<(StoredTask, u64)>, StoreError>> {
        self.tasks.get(id)
    }
    fn commit<'a>(
        &'a self,
        task: &'a StoredTask,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.tasks.commit(task, events).await?;
            self.drop_evicted_runs();
            Ok(())
        })
    }
    fn commit_shared<'a>(
        &'a self,
        task: &'a Arc<StoredTask>,
        events: &'a [LoggedEvent],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.tasks.commit_shared(task, events).await?;
            self.drop_evicted_runs();
            Ok(())
        })
    }
    fn ended_unfollowed(&self, task: &TaskId) {
        self.tasks.ended_unfollowed(task);
    }
    fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> BoxFuture<'_, Result<Vec<LoggedEvent>, StoreError>> {
        self.tasks.events_after(id, after)
    }
    fn task_of_message<'a>(
        &'a self,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskId>, StoreError>> {
        self.tasks.task_of_message(message_id)
    }
    fn unfinished(&self) -> BoxFuture<'_, Result<Vec<(StoredTask, u64)>, StoreError>> {
        self.tasks.unfinished()
    }
    fn prune(&self, before: SystemTime) -> BoxFuture<'_, Result<usize, StoreError>> {
        self.prune_finished(before)
    }
    fn set_push_config(
        &self,
        task: &TaskId,
        config: StoredPushConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.tasks.set_push_config(task, config)
    }
    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<StoredPushConfig>, StoreError>> {
        self.tasks.push_configs(task)
    }
    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.tasks.delete_push_config(task, config_id)
    }

    fn list(&self, query: &TaskQuery) -> BoxFuture<'_, Result<TaskPage, StoreError>> {
        self.tasks.list(query)
    }
}

impl RunStore for MemoryStore {
    fn create_run<'a>(&'a self, header: &'a RunHeader) -> BoxFuture<'a, Result<(), RunStoreError>> {
        self.runs.create_run(header)
    }
    fn save_unit<'a>(
        &'a self,
        run_id: &'a str,
        step: &'a str,
        item: Option<usize>,
        checkpoint: &'a Checkpoint,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        self.runs.save_unit(run_id, step, item, checkpoint)
    }
    fn set_canceled<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), RunStoreError>> {
        self.runs.set_canceled(run_id)
    }
    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), RunStoreError>> {
        self.runs.finish_run(run_id, end)
    }
    fn load_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SavedRun>, RunStoreError>> {
        self.runs.load_run(run_id)
    }
}

#[cfg(test)]
mod tests {
    use super::MemoryStore;
    use a2a::store::StoredTask;
    use a2a::store::{InMemoryTaskStore, TaskStore};
    use a2a::types::{Task, TaskId, TaskState, TaskStatus};
    use orchestrator_core::engine::{MemoryRunStore, RunEnd, RunHeader, RunState, RunStore};

    /// A finished task dropped past the store's bound takes its run along: the runs
    /// stay as bounded as the tasks.
    #[tokio::test]
    async fn a_run_goes_with_its_task_past_the_bound() {
        let store = MemoryStore {
            tasks: InMemoryTaskStore::with_finished_kept(2).reporting_evictions(),
            runs: MemoryRunStore::new(),
            marks: Default::default(),
        };
        for id in ["r1", "r2", "r3"] {
            let header = RunHeader {
                run_id: id.into(),
                workflow_id: "w".into(),
                workflow_file: "w.toml".into(),
                workflow_source: String::new(),
                workflow_hash: String::new(),
                inputs: Default::default(),
                trace: None,
                started_at: None,
                initiator: None,
                tenant: None,
                retry_of: None,
                held: None,
                parent: None,
            };
            store.create_run(&header).await.unwrap();
            let end = RunEnd {
                state: RunState::Completed,
                message: None,
                output_text: None,
                output_data: None,
            };
            store.finish_run(id, &end).await.unwrap();
            let task = StoredTask::new(Task::new(id, "c", TaskStatus::new(TaskState::Completed)));
            store.commit(&task, &[]).await.unwrap();
        }
        assert!(store.get(&TaskId::new("r1")).await.unwrap().is_none());
        assert!(store.load_run("r1").await.unwrap().is_none());
        for kept in ["r2", "r3"] {
            assert!(store.get(&TaskId::new(kept)).await.unwrap().is_some());
            assert!(store.load_run(kept).await.unwrap().is_some(), "{kept}");
        }
    }
}
