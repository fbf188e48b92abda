//! `ListTasks`, the A2A 1.0 method that pages through an agent's tasks (0.3 has none):
//! the call over the card's 1.0 interface, and the request as HTTP+JSON's query.

use crate::Version;
use crate::client::transport::{Transport, V1};
use crate::client::{A2aClient, ClientError, RequestLine};
use crate::types::{ListTasksRequest, ListTasksResponse, TaskState};

impl A2aClient {
    /// `ListTasks`, an A2A 1.0 method (0.3 has none): one page of the agent's tasks,
    /// newest status first. Called over the card's 1.0 interface whichever this client
    /// uses for the rest.
    pub async fn list_tasks(
        &self,
        request: &ListTasksRequest,
    ) -> Result<ListTasksResponse, ClientError> {
        if let Some(t) = &self.transport {
            return t.list_tasks(request).await;
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
        V1 { client: self, at }.list_tasks(request).await
    }
}

/// `request` as HTTP+JSON's request line (what it leaves unset, left out).
pub(super) fn line(request: &ListTasksRequest) -> RequestLine {
    let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let status = TaskState::try_from(request.status)
        .ok()
        .filter(|s| *s != TaskState::Unspecified);
    RequestLine::get("tasks")
        .query("contextId", text(&request.context_id))
        .query("status", status.map(|s| s.as_str_name()))
        .query("pageSize", request.page_size)
        .query("pageToken", text(&request.page_token))
        .query("historyLength", request.history_length)
        .query(
            "statusTimestampAfter",
            (request.status_timestamp_after).and_then(|t| t.to_rfc3339().ok()),
        )
        .query("includeArtifacts", request.include_artifacts)
}
