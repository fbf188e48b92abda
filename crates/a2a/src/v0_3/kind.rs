//! Constant discriminator values (`"kind": "task"`, ...).
//!
//! Each marker is a zero-sized type that serializes as its one string and refuses any
//! other on input, so a `Task` can only be read from JSON that says `"kind": "task"`.

use crate::jsonrpc::const_str;

const_str!(
    /// `"kind": "task"`.
    TaskKind = "task"
);
const_str!(
    /// `"kind": "message"`.
    MessageKind = "message"
);
const_str!(
    /// `"kind": "status-update"`.
    StatusUpdateKind = "status-update"
);
const_str!(
    /// `"kind": "artifact-update"`.
    ArtifactUpdateKind = "artifact-update"
);
