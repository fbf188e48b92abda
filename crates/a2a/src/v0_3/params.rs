//! The `params` object of each JSON-RPC method (spec §7).

use serde::{Deserialize, Serialize};

use super::{Message, Metadata, PushNotificationConfig, TaskId};

/// Params of `message/send` and `message/stream`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendParams {
    /// The message.
    pub message: Message,
    /// How the request is to be answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    /// The request's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl MessageSendParams {
    /// Params carrying just `message`.
    pub fn new(message: Message) -> Self {
        Self {
            message,
            configuration: None,
            metadata: None,
        }
    }
}

/// Per-request options of `message/send` / `message/stream`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendConfiguration {
    /// The media types the client takes in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_output_modes: Option<Vec<String>>,
    /// Whether the call waits for the task to end (or to need input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
    /// At most this many messages of the task's history in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    /// Where to push the task's updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config: Option<PushNotificationConfig>,
}

/// Params naming a task: `tasks/cancel`, `tasks/resubscribe`,
/// `tasks/pushNotificationConfig/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub id: TaskId,
    /// The request's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskIdParams {
    /// Params naming task `id`.
    pub fn new(id: TaskId) -> Self {
        Self { id, metadata: None }
    }
}

/// Params of `tasks/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskQueryParams {
    /// The task.
    pub id: TaskId,
    /// At most this many messages of its history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    /// The request's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskQueryParams {
    /// Params naming task `id`.
    pub fn new(id: TaskId) -> Self {
        Self {
            id,
            history_length: None,
            metadata: None,
        }
    }
}

/// Params of `tasks/pushNotificationConfig/get` (the id of the config is optional: the
/// task's first config is returned without it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigParams {
    /// The task.
    pub id: TaskId,
    /// The config, when the task has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    /// The request's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/pushNotificationConfig/list`.
pub type ListTaskPushNotificationConfigParams = TaskIdParams;

/// Params of `tasks/pushNotificationConfig/delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigParams {
    /// The task.
    pub id: TaskId,
    /// The config to delete.
    pub push_notification_config_id: String,
    /// The request's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}
