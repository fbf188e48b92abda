//! The official Python SDK 0.3's reading of a value (a2a-sdk 0.3.26's pydantic models,
//! in a validator process): what the tests that check our v0.3 shapes call.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

/// The validator process (`tests/python/validate_v03.py`), started once.
fn validator() -> &'static Mutex<(ChildStdin, BufReader<ChildStdout>)> {
    static VALIDATOR: OnceLock<Mutex<(ChildStdin, BufReader<ChildStdout>)>> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let script = std::path::Path::new(crate::util::ROOT).join("tests/python/validate_v03.py");
        let mut child = Command::new(crate::util::python())
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the SDK 0.3 validator");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        // The process ends with the test binary, when its stdin closes.
        std::mem::forget(child);
        Mutex::new((stdin, stdout))
    })
}

/// Asserts that the official SDK 0.3 reads `value` as its type `def` (the spec's name:
/// `Task`, `SendMessageSuccessResponse`, `TaskNotFoundError`, …). The SDK is the full
/// suite's (`cargo xtask test`): in plain `cargo test`, which needs Rust alone, the tests
/// that call this check what they check in Rust, and the SDK's reading of it is left to
/// the full suite, which runs each such test's twin (in its file's `read_by_the_sdk`
/// module, ignored in plain `cargo test`) with this check on.
pub fn assert_valid(def: &str, value: &Value) {
    if !crate::util::full_suite() {
        return;
    }
    let answer = {
        let mut guard = validator().lock().unwrap_or_else(|p| p.into_inner());
        let (stdin, stdout) = &mut *guard;
        writeln!(stdin, "{}", json!({ "def": def, "value": value }))
            .expect("write to the validator");
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("read the validator's answer");
        line
    };
    let answer: Value = serde_json::from_str(&answer)
        .unwrap_or_else(|e| panic!("the validator answered {answer:?}: {e}"));
    assert!(
        answer["ok"] == true,
        "not a valid {def}:\n{}\n{}",
        answer["error"].as_str().unwrap_or("?"),
        serde_json::to_string_pretty(value).unwrap()
    );
}
