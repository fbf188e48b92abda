//! The engine's [`TextModel`] over [`Llm`]: where the engine and the language model
//! meet, so that neither knows the other. `kind = "llm"` steps reach the model through
//! this; the example agents use [`Llm`] directly, without the engine.

use futures::StreamExt;
use futures::future::BoxFuture;

use crate::llm::Llm;
use orchestrator_core::engine::{ModelError, Prompt, TextModel, Tokens};

impl TextModel for Llm {
    fn name(&self) -> &str {
        Llm::name(self)
    }

    fn stream(&self, prompt: Prompt) -> BoxFuture<'static, Result<Tokens, ModelError>> {
        let this = self.clone();
        Box::pin(async move {
            let tokens = Llm::stream(&this, prompt.system, prompt.user)
                .await
                .map_err(|e| ModelError(e.to_string()))?;
            Ok(tokens
                .map(|t| t.map_err(|e| ModelError(e.to_string())))
                .boxed())
        })
    }
}
