//! The requests a client sends and a server's handler takes (spec §3.1), as the proto
//! has them, with constructors for the common case.

use crate::proto::pb::{
    CancelTaskRequest, GetTaskRequest, Message, SendMessageConfiguration, SendMessageRequest,
    SubscribeToTaskRequest,
};

impl SendMessageRequest {
    /// A request carrying just `message`: answered once the task ends or waits for the
    /// client (blocking), with no push config.
    pub fn new(message: Message) -> SendMessageRequest {
        SendMessageRequest {
            message: Some(message),
            ..Default::default()
        }
    }

    /// The same request answered at once, with the task as it stands
    /// (`returnImmediately`; v0.3's `blocking: false`).
    pub fn returning_immediately(mut self) -> SendMessageRequest {
        self.configuration
            .get_or_insert_with(SendMessageConfiguration::default)
            .return_immediately = true;
        self
    }

    /// Whether the request waits for the task to end or to need the client (the
    /// default).
    pub fn blocking(&self) -> bool {
        !self
            .configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately)
    }
}

impl GetTaskRequest {
    /// GetTask of task `id`, its whole history.
    pub fn new(id: impl Into<String>) -> GetTaskRequest {
        GetTaskRequest {
            id: id.into(),
            ..Default::default()
        }
    }
}

impl CancelTaskRequest {
    /// CancelTask of task `id`.
    pub fn new(id: impl Into<String>) -> CancelTaskRequest {
        CancelTaskRequest {
            id: id.into(),
            ..Default::default()
        }
    }
}

impl SubscribeToTaskRequest {
    /// SubscribeToTask of task `id`.
    pub fn new(id: impl Into<String>) -> SubscribeToTaskRequest {
        SubscribeToTaskRequest {
            id: id.into(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_blocks_unless_told_to_return_at_once() {
        let request = SendMessageRequest::new(Message::user_text("hi"));
        assert!(request.blocking());
        let at_once = request.returning_immediately();
        assert!(!at_once.blocking());
        let json = serde_json::to_value(&at_once).unwrap();
        assert_eq!(json["configuration"]["returnImmediately"], true);
        assert_eq!(GetTaskRequest::new("t").id, "t");
        assert_eq!(CancelTaskRequest::new("t").id, "t");
        assert_eq!(SubscribeToTaskRequest::new("t").id, "t");
    }
}
