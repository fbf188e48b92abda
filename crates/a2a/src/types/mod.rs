//! The protocol's model, whatever generation a peer speaks: A2A v1.0's messages as the
//! normative proto defines them (generated in [`crate::proto::pb`], re-exported here),
//! with what a program needs to make and read them; identifiers; metadata.
//!
//! A task's stream carries [`StreamEvent`]s (the payload of the proto's
//! `StreamResponse`), and `SendMessage` answers with a [`SendMessageResult`]. Enums
//! are the proto's: a message's `role` and a status's `state` are stored as numbers,
//! read with their accessors (`message.role()`, `status.state()`).

mod events;
mod ids;
mod message;
mod metadata;
mod requests;
mod task;

pub use events::{SendMessageResult, StreamEvent};
pub use ids::*;
pub use message::{MAX_PARTS, decode_base64, media_type_matches, parts_text};
pub use metadata::Metadata;

pub use crate::proto::Timestamp;
pub use crate::proto::json::JsonValue;
pub use crate::proto::pb::part::Content;
pub use crate::proto::pb::{
    Artifact, AuthenticationInfo, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Message, Part,
    Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
