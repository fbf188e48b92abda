//! The gRPC binding's methods (each [`Rpc`]), and tonic's codec for messages left as
//! bytes, which each end decodes into the proto's types itself.

use bytes::Bytes;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// The gRPC service's full name.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// One method of the service: its name, whether it answers with a stream, and its
/// request message's name (for errors).
pub struct Rpc {
    /// The method's name (`SendMessage`).
    pub name: &'static str,
    /// Whether it answers with a stream of messages.
    pub streaming: bool,
    /// The request message's full name.
    pub request: &'static str,
}

macro_rules! rpc {
    ($name:literal, $streaming:literal, $req:literal) => {
        Rpc {
            name: $name,
            streaming: $streaming,
            request: $req,
        }
    };
}

/// Every method of `A2AService`, as the proto declares it.
static RPCS: [Rpc; 11] = [
    rpc!("SendMessage", false, "lf.a2a.v1.SendMessageRequest"),
    rpc!("SendStreamingMessage", true, "lf.a2a.v1.SendMessageRequest"),
    rpc!("GetTask", false, "lf.a2a.v1.GetTaskRequest"),
    rpc!("ListTasks", false, "lf.a2a.v1.ListTasksRequest"),
    rpc!("CancelTask", false, "lf.a2a.v1.CancelTaskRequest"),
    rpc!("SubscribeToTask", true, "lf.a2a.v1.SubscribeToTaskRequest"),
    rpc!(
        "CreateTaskPushNotificationConfig",
        false,
        "lf.a2a.v1.TaskPushNotificationConfig"
    ),
    rpc!(
        "GetTaskPushNotificationConfig",
        false,
        "lf.a2a.v1.GetTaskPushNotificationConfigRequest"
    ),
    rpc!(
        "ListTaskPushNotificationConfigs",
        false,
        "lf.a2a.v1.ListTaskPushNotificationConfigsRequest"
    ),
    rpc!(
        "GetExtendedAgentCard",
        false,
        "lf.a2a.v1.GetExtendedAgentCardRequest"
    ),
    rpc!(
        "DeleteTaskPushNotificationConfig",
        false,
        "lf.a2a.v1.DeleteTaskPushNotificationConfigRequest"
    ),
];

/// The method `name` of the service, if it has one.
pub fn rpc(name: &str) -> Option<&'static Rpc> {
    RPCS.iter().find(|r| r.name == name)
}

/// tonic's codec for messages left as bytes: each end decodes them itself into the
/// method's types. Both ends of the binding use it.
pub struct Raw;

impl Codec for Raw {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        use bytes::BufMut;
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        use bytes::Buf;
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_of_the_proto_is_served() {
        // The service as the vendored proto declares it, method by method.
        let proto = include_str!("../../proto/a2a.proto");
        let declared: Vec<&str> = proto
            .lines()
            .filter_map(|l| l.trim().strip_prefix("rpc "))
            .map(|l| l.split('(').next().unwrap_or_default().trim())
            .collect();
        assert_eq!(declared.len(), RPCS.len(), "{declared:?}");
        for name in declared {
            let rpc = rpc(name).unwrap_or_else(|| panic!("{name} has no Rpc"));
            let streams = proto.contains(&format!("rpc {name}(")) && {
                let at = proto.find(&format!("rpc {name}(")).unwrap();
                let line = proto[at..].lines().next().unwrap();
                line.contains("returns (stream ")
            };
            assert_eq!(rpc.streaming, streams, "{name}");
        }
    }

    /// The messages' ProtoJSON and binary forms hold the same values, well-known
    /// types in their JSON forms included.
    #[test]
    fn messages_go_to_bytes_and_back_through_json() {
        use crate::proto::pb;
        use prost::Message as _;
        let task = serde_json::json!({
            "id": "t1",
            "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-11-26T10:00:00.250Z"},
            "metadata": {"nested": {"list": [1.25, "two", null, true]}},
            "artifacts": [{"artifactId": "a", "parts": [{"data": {"k": 1.5}}, {"raw": "aGk="}]}]
        });
        let typed: pb::Task = serde_json::from_value(task.clone()).unwrap();
        let bytes = typed.encode_to_vec();
        let back = pb::Task::decode(bytes.as_slice()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), task);
        assert!(pb::Task::decode(&[0xff, 0xff][..]).is_err());
        assert!(crate::proto::json::Empty.encode_to_vec().is_empty());
    }
}
