//! `ListTasks`, the A2A 1.0 method that pages through an agent's tasks (0.3 has none):
//! the query, the page, and the call over the card's 1.0 interface.

use crate::Method;
use crate::Version;
use crate::client::{A2aClient, ClientError, RequestLine, v1c, v1t};
use crate::types::{Task, TaskState};

impl A2aClient {
    /// `ListTasks`, an A2A 1.0 method (0.3 has none): one page of the agent's tasks,
    /// newest status first. Called over the card's 1.0 interface whichever this client
    /// uses for the rest.
    pub async fn list_tasks(&self, query: &ListTasksQuery) -> Result<TaskList, ClientError> {
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
        let method = Method::ListTasks;
        let request = v1t::ListTasksRequest {
            tenant: at.tenant.clone(),
            context_id: query.context_id.clone().unwrap_or_default(),
            status: query.status.map_or(0, |s| v1c::task_state(s) as i32),
            page_size: query.page_size.map(|n| n.min(i32::MAX as u32) as i32),
            page_token: query.page_token.clone().unwrap_or_default(),
            history_length: query.history_length.map(|n| n.min(i32::MAX as u32) as i32),
            status_timestamp_after: (query.status_timestamp_after.as_deref())
                .map(crate::proto::Timestamp::parse)
                .transpose()
                .map_err(|why| {
                    ClientError::Rpc(crate::RpcError::invalid_params("statusTimestampAfter", why))
                })?,
            include_artifacts: query.include_artifacts,
        };
        let line = RequestLine::get("tasks")
            .query("contextId", query.context_id.clone())
            .query(
                "status",
                query.status.map(|s| v1c::task_state(s).as_str_name()),
            )
            .query("pageSize", request.page_size)
            .query("pageToken", query.page_token.clone())
            .query("historyLength", request.history_length)
            .query("statusTimestampAfter", query.status_timestamp_after.clone())
            .query("includeArtifacts", query.include_artifacts);
        let page: v1t::ListTasksResponse = self.v1(at, method, &request, line, false).await?;
        let tasks = page
            .tasks
            .into_iter()
            .enumerate()
            .map(|(i, t)| v1c::task_in(t, &format!("result.tasks[{i}]")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Self::unreadable(at, method, e))?;
        Ok(TaskList {
            tasks,
            next_page_token: (!page.next_page_token.is_empty()).then_some(page.next_page_token),
            total_size: page.total_size.max(0) as u64,
        })
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
