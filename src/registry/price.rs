//! What an agent's (or the language model's) work costs: `price = { … }` in agents.toml
//! and in `[llm]`, read the same way in both; and the one currency a server's costs
//! are counted in, since a run adds its agents' costs together.

use orchestrator_core::config::reader::{Ctx, Sp, TableReader};

/// The keys of a `price` table.
pub const KEYS: &[&str] = &[
    "input_per_million",
    "output_per_million",
    "per_call",
    "reported",
    "currency",
];

/// What work costs, in the currency the workflows' budgets count in: per million
/// tokens in and out (a model's price list), per message sent (`per_call`); and
/// whether the cost the agent reports itself is believed (`reported = true`: another
/// orchestrator, which adds up its own agents' costs) — else a cost an agent reports is
/// not taken.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
    pub per_call: f64,
    pub reported: bool,
}

impl Price {
    /// What `input` and `output` tokens cost.
    pub fn of_tokens(&self, input: u64, output: u64) -> f64 {
        (input as f64) * self.input_per_million / 1e6
            + (output as f64) * self.output_per_million / 1e6
    }
}

/// A price, and the currency it names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pricing {
    pub price: Price,
    pub currency: Option<String>,
}

/// A `price` table: the price, and the currency it names (an ISO 4217 code).
pub fn read(ctx: &mut Ctx<'_>, mut p: TableReader<'_, '_>) -> (Price, Option<Sp<String>>) {
    let mut rate = |ctx: &mut Ctx<'_>, key: &str| match p.number(ctx, key) {
        Some(n) if n.value >= 0.0 && n.value.is_finite() => n.value,
        Some(n) => {
            ctx.error(
                n.span,
                format!("`price.{key}` must be a number from 0 up, got {}", n.value),
            );
            0.0
        }
        None => 0.0,
    };
    let price = Price {
        input_per_million: rate(ctx, "input_per_million"),
        output_per_million: rate(ctx, "output_per_million"),
        per_call: rate(ctx, "per_call"),
        reported: p.bool(ctx, "reported").is_some_and(|b| b.value),
    };
    let currency = p.string(ctx, "currency").and_then(|c| {
        if c.value.len() == 3 && c.value.bytes().all(|b| b.is_ascii_uppercase()) {
            Some(c)
        } else {
            ctx.error(
                c.span,
                format!(
                    "`price.currency` must be a currency's three-letter code such as \"USD\" or \"EUR\", got {:?}",
                    c.value
                ),
            );
            None
        }
    });
    p.finish(ctx, KEYS);
    (price, currency)
}

/// The one currency the prices in a file name, checked as each is read: a second one
/// is an error at its place, since a run's cost adds them up.
#[derive(Debug, Default)]
pub struct Currency {
    first: Option<(String, String)>,
}

impl Currency {
    /// Takes the currency `whose` price names (`agent "hr"`, `[llm]`).
    pub fn take(&mut self, ctx: &mut Ctx<'_>, whose: &str, currency: Option<Sp<String>>) {
        let Some(c) = currency else { return };
        match &self.first {
            None => self.first = Some((c.value, whose.to_owned())),
            Some((first, by)) if *first != c.value => ctx.error(
                c.span,
                format!(
                    "{whose} is priced in {}, {by} in {first}: a run adds its agents' costs together, so every price is in one currency",
                    c.value
                ),
            ),
            Some(_) => {}
        }
    }

    /// The currency named, if any.
    pub fn into_code(self) -> Option<String> {
        self.first.map(|(c, _)| c)
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::load_str;

    #[test]
    fn a_price_is_read_with_its_call_and_currency() {
        let (file, diags) = load_str(
            "agents.toml",
            "[agents.a]\nurl = \"http://127.0.0.1:1\"\nprice = { input_per_million = 3.0, output_per_million = 15.0, per_call = 0.01, currency = \"USD\" }\n\n[agents.b]\nurl = \"http://127.0.0.1:2\"\nprice = { reported = true }\n",
        );
        let file = file.unwrap_or_else(|| panic!("{diags:?}"));
        assert_eq!(file.currency.as_deref(), Some("USD"));
        let a = file.agents[0].price.unwrap();
        assert_eq!((a.per_call, a.of_tokens(1_000_000, 0)), (0.01, 3.0));
        assert!(file.agents[1].price.unwrap().reported);
    }

    #[test]
    fn prices_in_two_currencies_or_below_zero_are_errors_where_they_are() {
        let (file, diags) = load_str(
            "agents.toml",
            "[agents.a]\nurl = \"http://127.0.0.1:1\"\nprice = { per_call = 0.01, currency = \"USD\" }\n\n[agents.b]\nurl = \"http://127.0.0.1:2\"\nprice = { per_call = -1, currency = \"EUR\" }\n\n[agents.c]\nurl = \"http://127.0.0.1:3\"\nprice = { currency = \"dollars\" }\n",
        );
        assert!(file.is_none());
        let said: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 3, "{said:#?}");
        assert!(
            said[0].starts_with("agents.toml:7:")
                && said[0].contains("`price.per_call` must be a number from 0 up, got -1"),
            "{said:#?}"
        );
        assert!(
            said[1].starts_with("agents.toml:7:")
                && said[1].contains("agent `b` is priced in EUR, agent `a` in USD"),
            "{said:#?}"
        );
        assert!(
            said[2].starts_with("agents.toml:11:")
                && said[2].contains("three-letter code such as \"USD\""),
            "{said:#?}"
        );
    }
}
