//! `ListTasks`, the A2A 1.0 method that pages through an agent's tasks (0.3 has none):
//! the query, the page, and the call over the card's 1.0 interface.

use crate::Version;
use crate::client::transport::{Transport, V1};
use crate::client::{A2aClient, ClientError, RequestLine, v1c, v1t};
use crate::v0_3::{Task, TaskState};

impl A2aClient {
    /// `ListTasks`, an A2A 1.0 method (0.3 has none): one page of the agent's tasks,
    /// newest status first. Called over the card's 1.0 interface whichever this client
    /// uses for the rest.
    pub async fn list_tasks(&self, query: &ListTasksQuery) -> Result<TaskList, ClientError> {
        if let Some(t) = &self.transport {
            return t.list_tasks(query).await;
        }
        let Some(at) = self
            .interfaces
            .iter()
            .find(|at| at.protocol == Version::V1_0)
        else {
            return Err(ClientError::UnsupportedTransport {
                wanted: "A2A 1.0 (ListTasks is a 1.0 method)".into(),
                offered: self.interfaces.iter().map(ToString::to_string).collect(),
            });
        };
        V1 { client: self, at }.list_tasks(query).await
    }
}

impl ListTasksQuery {
    /// The query as v1.0's request, in `tenant`.
    pub(super) fn request(&self, tenant: &str) -> Result<v1t::ListTasksRequest, ClientError> {
        Ok(v1t::ListTasksRequest {
            tenant: tenant.to_owned(),
            context_id: self.context_id.clone().unwrap_or_default(),
            status: self.status.map_or(0, |s| v1c::task_state(s) as i32),
            page_size: self.page_size.map(|n| n.min(i32::MAX as u32) as i32),
            page_token: self.page_token.clone().unwrap_or_default(),
            history_length: self.history_length.map(|n| n.min(i32::MAX as u32) as i32),
            status_timestamp_after: (self.status_timestamp_after.as_deref())
                .map(crate::proto::Timestamp::parse)
                .transpose()
                .map_err(|why| {
                    ClientError::Rpc(crate::RpcError::invalid_params("statusTimestampAfter", why))
                })?,
            include_artifacts: self.include_artifacts,
        })
    }

    /// The query as HTTP+JSON's request line.
    pub(super) fn line(&self, request: &v1t::ListTasksRequest) -> RequestLine {
        RequestLine::get("tasks")
            .query("contextId", self.context_id.clone())
            .query(
                "status",
                self.status.map(|s| v1c::task_state(s).as_str_name()),
            )
            .query("pageSize", request.page_size)
            .query("pageToken", self.page_token.clone())
            .query("historyLength", request.history_length)
            .query("statusTimestampAfter", self.status_timestamp_after.clone())
            .query("includeArtifacts", self.include_artifacts)
    }
}

/// What [`A2aClient::list_tasks`] asks for; every field optional.
#[derive(Debug, Clone, Default)]
pub struct ListTasksQuery {
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub status: Option<TaskState>,
    /// At most this many tasks a page (the agent's default when `None`).
    pub page_size: Option<u32>,
    /// The `next_page_token` of the page before.
    pub page_token: Option<String>,
    /// At most this many messages of each task's history.
    pub history_length: Option<u32>,
    /// Only tasks whose status changed at or after this time (RFC 3339).
    pub status_timestamp_after: Option<String>,
    /// Whether each task comes with its artifacts.
    pub include_artifacts: Option<bool>,
}

/// A page of tasks.
#[derive(Debug, Clone)]
pub struct TaskList {
    /// The tasks of this page.
    pub tasks: Vec<Task>,
    /// Where the next page starts; `None` on the last.
    pub next_page_token: Option<String>,
    /// Tasks matching the query, on every page.
    pub total_size: u64,
}
