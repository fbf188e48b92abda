//! The operations in A2A v1.0's messages (the proto's, the model itself), shared by
//! its three bindings (JSON-RPC and HTTP+JSON read them from ProtoJSON, gRPC from
//! bytes): each hands its request to the handler as it came and its answer back,
//! shaping only what v1.0 says of pages and push configs. Nothing here knows HTTP,
//! JSON-RPC or gRPC.

use super::handler::StreamRequest;
use crate::proto::pb as w;
use crate::server::{Caller, Inner, http};
use crate::store::{TaskCursor, TaskQuery};
use crate::types::{ContextId, TaskId, TaskState};
use crate::{RpcError, Version};
use serde_json::Value;

/// Most tasks on one ListTasks page, and the default.
pub(super) const MAX_PAGE: i32 = 100;
pub(super) const DEFAULT_PAGE: i32 = 50;

pub(super) async fn send(
    inner: &Inner,
    request: w::SendMessageRequest,
    caller: &Caller,
) -> Result<w::SendMessageResponse, RpcError> {
    let result = inner.send(request, Version::V1_0, caller).await?;
    Ok(result.into())
}

pub(super) fn stream_message(request: w::SendMessageRequest) -> StreamRequest {
    StreamRequest::Message(Box::new(request), Version::V1_0)
}

pub(super) fn subscribe(
    request: w::SubscribeToTaskRequest,
    after: Option<u64>,
) -> Result<StreamRequest, RpcError> {
    if request.id.is_empty() {
        return Err(RpcError::invalid_params("id", "a task id is required"));
    }
    Ok(StreamRequest::Subscribe {
        id: TaskId::new(request.id),
        after,
        terminal_ok: false,
    })
}

pub(super) async fn get(
    inner: &Inner,
    request: w::GetTaskRequest,
    caller: &Caller,
) -> Result<w::Task, RpcError> {
    inner.get_task(request, caller).await
}

pub(super) async fn cancel(
    inner: &Inner,
    request: w::CancelTaskRequest,
    caller: &Caller,
) -> Result<w::Task, RpcError> {
    inner.cancel(request, caller).await
}

/// A page token: where the page before ended (`<status ms>.<task id>`).
fn page_token(cursor: &TaskCursor) -> String {
    format!("{}.{}", cursor.status_ms, cursor.id)
}

fn parse_page_token(token: &str) -> Result<TaskCursor, RpcError> {
    let bad = || {
        RpcError::invalid_params(
            "pageToken",
            "not a page token this server gave: pass the nextPageToken of the previous page as it is",
        )
    };
    let (ms, id) = token.split_once('.').ok_or_else(bad)?;
    Ok(TaskCursor {
        status_ms: ms.parse().map_err(|_| bad())?,
        id: TaskId::new(id),
    })
}

/// A ListTasks answer, whose ProtoJSON form writes every field, an empty
/// `nextPageToken` on the last page included (the spec's example, and what clients
/// test for the end), where ProtoJSON leaves out a field at its default.
pub(super) struct ListTasks(pub w::ListTasksResponse);

impl serde::Serialize for ListTasks {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let r = &self.0;
        let mut out = serializer.serialize_struct("ListTasksResponse", 4)?;
        out.serialize_field("tasks", &r.tasks)?;
        out.serialize_field("nextPageToken", &r.next_page_token)?;
        out.serialize_field("pageSize", &r.page_size)?;
        out.serialize_field("totalSize", &r.total_size)?;
        out.end()
    }
}

pub(super) async fn list(
    inner: &Inner,
    request: w::ListTasksRequest,
    caller: &Caller,
) -> Result<ListTasks, RpcError> {
    let page_size = request.page_size.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&page_size) {
        return Err(RpcError::invalid_params(
            "pageSize",
            format!("must be between 1 and {MAX_PAGE}, got {page_size}"),
        ));
    }
    let history_length = match request.history_length {
        None => None,
        Some(n) => Some(u32::try_from(n).map_err(|_| {
            RpcError::invalid_params("historyLength", format!("must be 0 or more, got {n}"))
        })?),
    };
    // Read as a Timestamp already (ProtoJSON's RFC 3339, or gRPC's seconds and nanos).
    let changed_since_ms = request.status_timestamp_after.map(|t| t.unix_millis());
    let state = match request.status {
        0 => None,
        n => Some(
            TaskState::try_from(n)
                .map_err(|_| RpcError::invalid_params("status", format!("{n} is no task state")))?,
        ),
    };
    let query = TaskQuery {
        context_id: (!request.context_id.is_empty()).then(|| ContextId::new(request.context_id)),
        state,
        changed_since_ms,
        limit: page_size as usize,
        after: match request.page_token.as_str() {
            "" => None,
            token => Some(parse_page_token(token)?),
        },
        initiator: None,
        tenant: None,
    };
    let page = inner.list_tasks(query, caller).await?;
    let include_artifacts = request.include_artifacts.unwrap_or(false);
    let tasks = page
        .tasks
        .into_iter()
        .map(|stored| {
            let mut t = stored.task;
            t.truncate_history(history_length);
            if !include_artifacts {
                t.artifacts.clear();
            }
            t
        })
        .collect();
    Ok(ListTasks(w::ListTasksResponse {
        tasks,
        next_page_token: page.next.as_ref().map(page_token).unwrap_or_default(),
        page_size,
        total_size: i32::try_from(page.total).unwrap_or(i32::MAX),
    }))
}

pub(super) async fn create_push(
    inner: &Inner,
    request: w::TaskPushNotificationConfig,
    caller: &Caller,
) -> Result<w::TaskPushNotificationConfig, RpcError> {
    // Set over v1.0: its notifications are v1.0 StreamResponses (§4.3.3).
    inner.set_push(request, Version::V1_0, "", caller).await
}

pub(super) async fn get_push(
    inner: &Inner,
    request: w::GetTaskPushNotificationConfigRequest,
    caller: &Caller,
) -> Result<w::TaskPushNotificationConfig, RpcError> {
    let task_id = TaskId::new(request.task_id);
    inner
        .get_push_config(&task_id, Some(&request.id), "id", caller)
        .await
}

pub(super) async fn list_push(
    inner: &Inner,
    request: w::ListTaskPushNotificationConfigsRequest,
    caller: &Caller,
) -> Result<w::ListTaskPushNotificationConfigsResponse, RpcError> {
    let task_id = TaskId::new(request.task_id);
    let configs = inner.list_push_configs(&task_id, caller).await?;
    Ok(w::ListTaskPushNotificationConfigsResponse {
        configs,
        next_page_token: String::new(),
    })
}

pub(super) async fn delete_push(
    inner: &Inner,
    request: w::DeleteTaskPushNotificationConfigRequest,
    caller: &Caller,
) -> Result<(), RpcError> {
    let task_id = TaskId::new(request.task_id);
    inner
        .delete_push_config(&task_id, &request.id, "id", caller)
        .await
}

/// The extended card as published (both generations' fields).
pub(super) fn extended_card(inner: &Inner, caller: &Caller) -> Result<Value, RpcError> {
    if !inner.cards().card.supports_extended_card() {
        return Err(RpcError::unsupported_operation(
            "this agent's card does not offer an extended card (capabilities.extendedAgentCard)",
        ));
    }
    Ok(http::published_card(
        &inner.extended_card(caller)?,
        &inner.config,
        inner.card_keys().as_deref(),
    ))
}
