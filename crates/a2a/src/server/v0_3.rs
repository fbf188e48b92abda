//! The operations in A2A v0.3's JSON-RPC methods: each reads its params into the model
//! (`v0_3::convert`), calls the handler, and writes the answer in v0.3's shapes. Push
//! configs set here are delivered with v0.3's bodies (the task).

use super::handler::StreamRequest;
use crate::server::{Caller, Inner};
use crate::v0_3::{self as w, convert};
use crate::{RpcError, Version};

pub(super) async fn send(
    inner: &Inner,
    params: w::MessageSendParams,
    caller: &Caller,
) -> Result<w::SendMessageResult, RpcError> {
    let request = convert::send_request_in(params)?;
    let result = inner.send(request, Version::V0_3, caller).await?;
    Ok(convert::send_result(&result))
}

pub(super) fn stream_message(params: w::MessageSendParams) -> Result<StreamRequest, RpcError> {
    let request = convert::send_request_in(params)?;
    Ok(StreamRequest::Message(Box::new(request), Version::V0_3))
}

pub(super) async fn get(
    inner: &Inner,
    params: w::TaskQueryParams,
    caller: &Caller,
) -> Result<w::Task, RpcError> {
    let task = inner
        .get_task(convert::get_request_in(params), caller)
        .await?;
    Ok(convert::task(&task))
}

pub(super) async fn cancel(
    inner: &Inner,
    params: w::TaskIdParams,
    caller: &Caller,
) -> Result<w::Task, RpcError> {
    let task = inner
        .cancel(convert::cancel_request_in(params), caller)
        .await?;
    Ok(convert::task(&task))
}

pub(super) async fn set_push(
    inner: &Inner,
    params: w::TaskPushNotificationConfig,
    caller: &Caller,
) -> Result<w::TaskPushNotificationConfig, RpcError> {
    let config = convert::push_config_in(params.push_notification_config, params.task_id.as_str());
    let set = inner
        .set_push(config, Version::V0_3, "pushNotificationConfig", caller)
        .await?;
    Ok(convert::push_config(&set))
}

pub(super) async fn get_push(
    inner: &Inner,
    params: w::GetTaskPushNotificationConfigParams,
    caller: &Caller,
) -> Result<w::TaskPushNotificationConfig, RpcError> {
    let id = params.push_notification_config_id.as_deref();
    let found = inner
        .get_push_config(&params.id, id, "pushNotificationConfigId", caller)
        .await?;
    Ok(convert::push_config(&found))
}

pub(super) async fn list_push(
    inner: &Inner,
    params: w::TaskIdParams,
    caller: &Caller,
) -> Result<Vec<w::TaskPushNotificationConfig>, RpcError> {
    let configs = inner.list_push_configs(&params.id, caller).await?;
    Ok(configs.iter().map(convert::push_config).collect())
}
