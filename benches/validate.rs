//! Benchmark: validating a generated 1,000-step workflow (target: under 50 ms).
//!
//! `cargo bench --bench validate` — prints the median and the slowest of the runs.
//! Each step needs up to three earlier steps and uses their outputs in its message, and
//! every tenth step is conditional, so every check of the validator does real work.

use std::time::{Duration, Instant};

use orchestrator_core::workflow::{self, Options};

fn generate(n: usize) -> String {
    let mut s = String::from(
        "[workflow]\nid = \"big\"\ndescription = \"generated\"\n[input]\nname = { type = \"string\", required = true }\n",
    );
    for i in 0..n {
        s.push_str(&format!("[steps.s{i}]\nagent = \"a{}\"\n", i % 7));
        let needs: Vec<usize> = [1, 2, 5]
            .iter()
            .filter(|&&d| i >= d)
            .map(|d| i - d)
            .collect();
        let list: Vec<String> = needs.iter().map(|n| format!("\"s{n}\"")).collect();
        s.push_str(&format!("needs = [{}]\n", list.join(", ")));
        if i % 10 == 3 {
            s.push_str("when = \"input.name != 'skip'\"\n");
        }
        let mut msg = String::from("Work for {{ input.name }}");
        for n in &needs {
            msg.push_str(&format!(
                "{{% if steps.s{n}.state == 'completed' %}} after {{{{ steps.s{n}.text }}}}{{% endif %}}"
            ));
        }
        s.push_str(&format!("message = \"{msg}\"\n"));
    }
    s
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let source = generate(1000);
    let runs = if quick { 3 } else { 21 };
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let (wf, diags) = workflow::load_str("big.toml", &source, Options::default());
        times.push(start.elapsed());
        assert!(
            wf.is_some(),
            "the generated workflow is valid: {:?}",
            diags.first()
        );
    }
    times.sort();
    let median = times[runs / 2];
    println!(
        "validate 1000 steps: median {:.1} ms, slowest {:.1} ms over {runs} runs (target: < 50 ms)",
        median.as_secs_f64() * 1e3,
        times[runs - 1].as_secs_f64() * 1e3
    );
}
