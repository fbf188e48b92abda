//! The engine's [`TextModel`] over [`Llm`]: where the engine and the language model
//! meet, so that neither knows the other. `kind = "llm"` steps reach the model through
//! this, their tokens priced as `[llm] price` says; the example agents use [`Llm`]
//! directly, without the engine.

use futures::StreamExt;
use futures::future::BoxFuture;

use crate::llm::{Llm, Piece};
use crate::registry::price::Price;
use orchestrator_core::engine::{self, ModelError, Prompt, TextModel, Tokens, Usage};

/// The model, and what its work costs.
pub struct Priced {
    llm: Llm,
    price: Price,
}

impl Priced {
    pub fn new(llm: Llm, price: Option<Price>) -> Priced {
        Priced {
            llm,
            price: price.unwrap_or_default(),
        }
    }
}

impl TextModel for Priced {
    fn name(&self) -> &str {
        self.llm.name()
    }

    fn stream(&self, prompt: Prompt) -> BoxFuture<'static, Result<Tokens, ModelError>> {
        let (llm, price) = (self.llm.clone(), self.price);
        Box::pin(async move {
            let tokens = llm
                .stream(prompt.system, prompt.user)
                .await
                .map_err(|e| ModelError(e.to_string()))?;
            // The call is charged as it starts: a count of its tokens may never come.
            let called = (price.per_call > 0.0).then(|| {
                Ok(engine::Piece::Used(Usage {
                    cost: price.per_call,
                    ..Usage::default()
                }))
            });
            Ok(futures::stream::iter(called)
                .chain(tokens.map(move |piece| match piece {
                    Ok(Piece::Text(t)) => Ok(engine::Piece::Text(t)),
                    Ok(Piece::Used {
                        input_tokens,
                        output_tokens,
                    }) => Ok(engine::Piece::Used(Usage {
                        input_tokens,
                        output_tokens,
                        calls: 0,
                        cost: price.of_tokens(input_tokens, output_tokens) + price.per_call,
                    })),
                    Err(e) => Err(ModelError(e.to_string())),
                }))
                .boxed())
        })
    }
}
