//! Where the server keeps tasks and their push-notification configs.
//!
//! A trait so that a durable store can replace the in-memory one without the server
//! changing; the server only ever saves whole task snapshots, after applying an event
//! and before announcing it, so a store always holds a state some client may have seen.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use crate::protocol::types::{PushNotificationConfig, Task, TaskId};

/// A failure of the backing store.
#[derive(Debug, thiserror::Error)]
#[error("task store: {0}")]
pub struct StoreError(pub String);

/// Persistence for tasks and push configs. Implementations must be cheap to share.
pub trait TaskStore: Send + Sync + 'static {
    /// The latest snapshot of a task.
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<Task>, StoreError>>;
    /// Replaces the snapshot of `task.id`.
    fn save(&self, task: &Task) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Adds or replaces (by `config.id`, which the caller has set) a push config.
    fn set_push_config(
        &self,
        task: &TaskId,
        config: PushNotificationConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>>;
    /// All push configs of a task, in the order they were first set.
    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<PushNotificationConfig>, StoreError>>;
    /// Removes one push config; whether it existed.
    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>>;
}

/// Keeps everything in process memory: fast, and gone at exit.
#[derive(Debug, Clone, Default)]
pub struct InMemoryTaskStore {
    // A std mutex: every critical section is a map operation, never held across an await.
    inner: Arc<Mutex<Maps>>,
}

#[derive(Debug, Default)]
struct Maps {
    tasks: HashMap<TaskId, Task>,
    push: HashMap<TaskId, Vec<PushNotificationConfig>>,
}

impl InMemoryTaskStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Maps) -> R) -> R {
        // A poisoned lock means a panic mid-update of a plain map; the maps stay usable.
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}

impl TaskStore for InMemoryTaskStore {
    fn get(&self, id: &TaskId) -> BoxFuture<'_, Result<Option<Task>, StoreError>> {
        let task = self.with(|m| m.tasks.get(id).cloned());
        Box::pin(async move { Ok(task) })
    }

    fn save(&self, task: &Task) -> BoxFuture<'_, Result<(), StoreError>> {
        self.with(|m| m.tasks.insert(task.id.clone(), task.clone()));
        Box::pin(async { Ok(()) })
    }

    fn set_push_config(
        &self,
        task: &TaskId,
        config: PushNotificationConfig,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.with(|m| {
            let list = m.push.entry(task.clone()).or_default();
            match list.iter_mut().find(|c| c.id == config.id) {
                Some(existing) => *existing = config,
                None => list.push(config),
            }
        });
        Box::pin(async { Ok(()) })
    }

    fn push_configs(
        &self,
        task: &TaskId,
    ) -> BoxFuture<'_, Result<Vec<PushNotificationConfig>, StoreError>> {
        let list = self.with(|m| m.push.get(task).cloned().unwrap_or_default());
        Box::pin(async move { Ok(list) })
    }

    fn delete_push_config(
        &self,
        task: &TaskId,
        config_id: &str,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        let removed = self.with(|m| {
            let Some(list) = m.push.get_mut(task) else {
                return false;
            };
            let before = list.len();
            list.retain(|c| c.id.as_deref() != Some(config_id));
            before != list.len()
        });
        Box::pin(async move { Ok(removed) })
    }
}
