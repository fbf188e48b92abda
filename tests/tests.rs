//! The integration test suite: one binary, with real servers on `127.0.0.1:0` and the
//! official Python SDK (`a2a-sdk`) as a peer. Shared fixtures are in `util/`: helpers and
//! servers (`mod.rs`), orchestras in-process or as `serve` (`orchestra.rs`), counting
//! agents, raw SSE, throwaway PostgreSQL clusters and the SDK 0.3 validator.

mod util;

// The example agent is compiled into the tests as it is: the template users copy is the
// peer the tests exercise.
#[allow(dead_code)]
#[path = "../examples/echo_agent.rs"]
mod echo_agent;

// The conformance kit's system under test, compiled in as users run it.
#[allow(dead_code)]
#[path = "../examples/conformance_agent.rs"]
mod conformance_agent;

mod card_signatures;
mod cli;
mod client;
mod conformance;
mod connect;
mod crates;
mod durable;
mod engine;
mod errors;
mod fleet;
mod fuzz;
mod golden;
mod grpc;
mod host;
mod identity;
mod inbox;
mod js_client;
mod layers;
mod llm;
mod ops;
mod outbound;

mod python_client;
mod python_server;
mod python_v1_client;
mod registry;
mod replicas;
mod runs;
mod schedules;
mod schema;
mod server;
mod subworkflows;
mod testmode;
mod traces;
mod ui;
mod usage;
mod v1;
mod webhooks;
mod wire;
mod workflow_props;
mod workflows;
