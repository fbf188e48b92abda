//! Throwaway PostgreSQL clusters for the tests: Debian's `postgresql` (installed with
//! apt-get, as root, when missing), a cluster made with `initdb` under
//! `target/postgres/` on a free loopback port, stopped and removed when the test drops
//! it. Each test that needs PostgreSQL makes its own, so tests never share a server.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use sqlx::Connection;

use crate::util::ROOT;

/// A running cluster; stopped (immediately) and removed on drop.
pub struct Cluster {
    dir: PathBuf,
    pub port: u16,
    /// The server's options, for a restart.
    options: String,
}

/// The directory of Debian's PostgreSQL programs (`initdb`, `pg_ctl`), installing the
/// package when there is none.
fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let lock = File::create(Path::new(ROOT).join("target/apt.lock")).unwrap();
        lock.lock().expect("lock target/apt.lock");
        if find_bin().is_none() {
            let install = || {
                Command::new("apt-get")
                    .args(["install", "-y", "--no-install-recommends", "postgresql"])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .status()
                    .is_ok_and(|s| s.success())
            };
            // The package lists may be missing or stale on a fresh machine.
            if !install() {
                let updated = Command::new("apt-get").arg("update").status();
                assert!(
                    updated.is_ok_and(|s| s.success()) && install(),
                    "installing Debian's postgresql with apt-get failed (the PostgreSQL tests need it; run them as root, or install `postgresql` yourself)"
                );
            }
        }
        find_bin().expect("no /usr/lib/postgresql/*/bin/initdb after installing postgresql")
    })
}

/// The newest `/usr/lib/postgresql/N/bin` with an `initdb`.
fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let n = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((n, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Whether this process runs as root (PostgreSQL refuses to; it runs as `postgres`).
fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|ids| ids.split_whitespace().next() == Some("0"))
        })
        .unwrap_or(false)
}

/// A PostgreSQL program, run as `postgres` when we are root.
fn program(name: &str) -> Command {
    let path = bin().join(name);
    if root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(path);
        cmd
    } else {
        Command::new(path)
    }
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Cluster {
    /// Makes and starts a cluster named `name` (its directory under
    /// `target/postgres/`).
    pub fn start(name: &str) -> Cluster {
        let dir = Path::new(ROOT)
            .join("target/postgres")
            .join(format!("{name}-{}", std::process::id()));
        if dir.join("postmaster.pid").exists() {
            // Left running by a test that was killed: stopped first.
            let _ = program("pg_ctl")
                .args(["-D", dir.to_str().unwrap(), "-m", "immediate", "stop"])
                .output();
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if root() {
            run(
                Command::new("chown").args(["postgres:postgres", dir.to_str().unwrap()]),
                "chown the cluster's directory to postgres",
            );
        }
        run(
            program("initdb").args([
                "-D",
                dir.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "--no-locale",
                "-E",
                "UTF8",
            ]),
            "initdb",
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let options = format!(
            "-p {port} -h 127.0.0.1 -c unix_socket_directories='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        );
        let cluster = Cluster { dir, port, options };
        cluster.start_server();
        cluster
    }

    fn start_server(&self) {
        run(
            program("pg_ctl").args([
                "-D",
                self.dir.to_str().unwrap(),
                "-l",
                self.dir.join("server.log").to_str().unwrap(),
                "-w",
                "-o",
                &self.options,
                "start",
            ]),
            "pg_ctl start",
        );
    }

    /// Stops the server (fast: open connections are cut), as an outage would.
    pub fn stop_server(&self) {
        run(
            program("pg_ctl").args(["-D", self.dir.to_str().unwrap(), "-m", "fast", "-w", "stop"]),
            "pg_ctl stop",
        );
    }

    /// Starts the server again after [`Cluster::stop_server`], on the same port.
    pub fn restart_server(&self) {
        self.start_server();
    }

    /// The URL of database `name` on this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates database `name`; its URL.
    pub async fn database(&self, name: &str) -> String {
        let mut conn = sqlx::PgConnection::connect(&self.url("postgres"))
            .await
            .expect("connect to the test cluster");
        sqlx::raw_sql(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut conn)
            .await
            .expect("create a database");
        conn.close().await.unwrap();
        self.url(name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = program("pg_ctl")
            .args(["-D", self.dir.to_str().unwrap(), "-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
