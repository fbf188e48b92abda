//! The command-line flags that configure the model (for `serve`, `demo` and the example
//! agents), each also read from an environment variable; they refine or replace the
//! `[llm]` table of a configuration file.

use super::LlmConfig;

/// `--llm-base-url`, `--llm-model`, `--llm-api-key-env`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LlmArgs {
    /// Use a language model at this OpenAI-compatible API (with --llm-model), e.g.
    /// `https://api.openai.com/v1` or `http://localhost:11434/v1` (Ollama). Off by default.
    #[arg(long, env = "A2A_LLM_BASE_URL", value_name = "URL")]
    pub llm_base_url: Option<String>,
    /// The model's name at that API, e.g. gpt-4o-mini or llama3.2.
    #[arg(long, env = "A2A_LLM_MODEL", value_name = "NAME")]
    pub llm_model: Option<String>,
    /// The environment variable that holds the API key (local servers need none).
    #[arg(long, env = "A2A_LLM_API_KEY_ENV", value_name = "VAR")]
    pub llm_api_key_env: Option<String>,
}

impl LlmArgs {
    /// The model these flags configure on top of `file` (a configuration file's
    /// `[llm]`, if any); `None`: no model.
    pub fn config(&self, file: Option<LlmConfig>) -> Result<Option<LlmConfig>, String> {
        let mut config = match (&self.llm_base_url, &self.llm_model, file) {
            (None, None, file) => file,
            (Some(url), Some(model), file) => Some(match file {
                Some(mut f) => {
                    f.base_url.clone_from(url);
                    f.model.clone_from(model);
                    f
                }
                None => LlmConfig::new(url, model),
            }),
            (Some(url), None, Some(mut f)) => {
                f.base_url.clone_from(url);
                Some(f)
            }
            (None, Some(model), Some(mut f)) => {
                f.model.clone_from(model);
                Some(f)
            }
            (Some(_), None, None) => {
                return Err("--llm-base-url needs --llm-model (or A2A_LLM_MODEL) too".into());
            }
            (None, Some(_), None) => {
                return Err("--llm-model needs --llm-base-url (or A2A_LLM_BASE_URL) too".into());
            }
        };
        if let Some(c) = &mut config {
            match reqwest::Url::parse(&c.base_url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                _ => {
                    return Err(format!(
                        "--llm-base-url must be an http or https URL such as http://localhost:11434/v1, not {:?}",
                        c.base_url
                    ));
                }
            }
            if let Some(var) = &self.llm_api_key_env {
                match std::env::var(var).ok().filter(|v| !v.is_empty()) {
                    Some(key) => c.api_key = Some(key),
                    None => {
                        return Err(format!(
                            "the environment variable {var} (named by --llm-api-key-env) is not set"
                        ));
                    }
                }
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(url: Option<&str>, model: Option<&str>) -> LlmArgs {
        LlmArgs {
            llm_base_url: url.map(Into::into),
            llm_model: model.map(Into::into),
            llm_api_key_env: None,
        }
    }

    #[test]
    fn flags_refine_the_file_and_need_each_other_without_it() {
        let mut file = LlmConfig::new("http://a/v1", "m1");
        file.max_tokens = 7;
        let c = args(None, Some("m2")).config(Some(file)).unwrap().unwrap();
        assert_eq!(
            (c.base_url.as_str(), c.model.as_str(), c.max_tokens),
            ("http://a/v1", "m2", 7)
        );
        assert!(args(None, None).config(None).unwrap().is_none());
        assert!(
            args(Some("http://b/v1"), None)
                .config(None)
                .unwrap_err()
                .contains("--llm-model")
        );
        assert!(
            args(Some("b"), Some("m"))
                .config(None)
                .unwrap_err()
                .contains("http")
        );
    }
}
