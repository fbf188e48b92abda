//! Throwaway PostgreSQL for the tests: Debian's `postgresql` (installed by `cargo
//! xtask prepare`), clusters made with `initdb` under `target/postgres/` on a free
//! loopback port. One cluster serves every test that leaves its server running
//! ([`Cluster::shared`]), for the whole suite (`cargo xtask test`'s passes share it;
//! else one a test process): each test makes its databases there (from the server's
//! template) and drops them when it ends; the cluster is stopped and removed when the
//! suite (or the process) has gone. A test that stops or restarts the server (an outage, a
//! TLS-only server) makes a cluster of its own ([`Cluster::start`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use sqlx::Connection;

use crate::util::ROOT;

/// The variable naming the process whose life the shared cluster lasts (`cargo xtask
/// test` sets it to its own, so that the suite's passes share one cluster).
pub const SUITE_PID: &str = "A2A_SUITE_PID";

/// A test's PostgreSQL: a cluster of its own, or its share of the process's cluster.
/// Dropped, it stops and removes its own cluster, or drops the databases it made on
/// the shared one.
pub struct Cluster {
    server: Server,
    pub port: u16,
    /// The databases made through this handle (dropped with it on a shared cluster).
    made: std::sync::Mutex<Vec<String>>,
}

enum Server {
    Own(Running),
    /// The process's cluster, which outlives every test.
    Shared,
}

/// A running cluster.
struct Running {
    dir: PathBuf,
    port: u16,
    /// The server's options, for a restart.
    options: String,
}

/// The directory of Debian's PostgreSQL programs (`initdb`, `pg_ctl`), which `cargo
/// xtask prepare` installs.
fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        crate::util::require_full_suite("PostgreSQL");
        find_bin().unwrap_or_else(|| {
            panic!(
                "no /usr/lib/postgresql/*/bin/initdb (Debian's postgresql): {}",
                crate::util::PREPARE
            )
        })
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

/// A certificate authority made for a test, and a server certificate it signed for
/// `localhost` and `127.0.0.1` (files in one directory, made with openssl).
pub struct Certs {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Certs {
    /// Makes a CA named `name` and a server certificate under `dir`.
    pub fn make(dir: &Path, name: &str) -> Certs {
        std::fs::create_dir_all(dir).unwrap();
        let at = |f: &str| dir.join(format!("{name}-{f}"));
        crate::util::require_full_suite("openssl");
        let openssl = |args: &[&str], what: &str| {
            let mut cmd = Command::new("openssl");
            cmd.args(args);
            run(&mut cmd, what);
        };
        let (ca, ca_key) = (at("ca.crt"), at("ca.key"));
        openssl(
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN={name} test CA"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout",
                ca_key.to_str().unwrap(),
                "-out",
                ca.to_str().unwrap(),
            ],
            "openssl: make a CA",
        );
        let (csr, key, cert, ext) = (
            at("server.csr"),
            at("server.key"),
            at("server.crt"),
            at("server.ext"),
        );
        openssl(
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
                key.to_str().unwrap(),
                "-out",
                csr.to_str().unwrap(),
            ],
            "openssl: make a server key",
        );
        std::fs::write(
            &ext,
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(
            &[
                "x509",
                "-req",
                "-in",
                csr.to_str().unwrap(),
                "-CA",
                ca.to_str().unwrap(),
                "-CAkey",
                ca_key.to_str().unwrap(),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                ext.to_str().unwrap(),
                "-out",
                cert.to_str().unwrap(),
            ],
            "openssl: sign the server certificate",
        );
        Certs { ca, cert, key }
    }
}

impl Cluster {
    /// The process's shared cluster (started by the first test that asks): for every
    /// test that leaves the server running. Its databases are the test's own.
    pub fn shared() -> Cluster {
        static SHARED: OnceLock<Running> = OnceLock::new();
        let running = SHARED.get_or_init(|| {
            // The suite's (`cargo xtask test` names itself, so that its passes share
            // one cluster), else this process's.
            let owner = std::env::var(SUITE_PID)
                .ok()
                .and_then(|p| p.parse().ok())
                .unwrap_or_else(std::process::id);
            let dir = Path::new(ROOT)
                .join("target/postgres")
                .join(format!("shared-{owner}"));
            if let Some(running) = Running::left_by_an_earlier_pass(&dir) {
                return running;
            }
            let running = Running::start_in(dir, None);
            std::fs::write(running.dir.join("port"), running.port.to_string()).unwrap();
            running.reaped_after(owner);
            running
        });
        Cluster {
            port: running.port,
            server: Server::Shared,
            made: Default::default(),
        }
    }

    /// Makes and starts a cluster named `name` (its directory under
    /// `target/postgres/`), for a test that stops or restarts its server.
    pub fn start(name: &str) -> Cluster {
        Self::own(Running::start(name, None))
    }

    /// Makes and starts a cluster that takes connections over TLS only (`hostssl` in
    /// `pg_hba.conf`, every plain connection rejected), with `certs`' server
    /// certificate.
    pub fn start_tls_only(name: &str, certs: &Certs) -> Cluster {
        Self::own(Running::start(name, Some(certs)))
    }

    fn own(running: Running) -> Cluster {
        Cluster {
            port: running.port,
            server: Server::Own(running),
            made: Default::default(),
        }
    }

    fn own_server(&self, what: &str) -> &Running {
        match &self.server {
            Server::Own(running) => running,
            Server::Shared => panic!(
                "{what}: the shared cluster serves other tests; a test that stops its server makes its own (Cluster::start)"
            ),
        }
    }

    /// Stops the server (fast: open connections are cut), as an outage would.
    pub fn stop_server(&self) {
        let dir = &self.own_server("stop_server").dir;
        run(
            program("pg_ctl").args(["-D", dir.to_str().unwrap(), "-m", "fast", "-w", "stop"]),
            "pg_ctl stop",
        );
    }

    /// Starts the server again after [`Cluster::stop_server`], on the same port.
    pub fn restart_server(&self) {
        self.own_server("restart_server").start_server();
    }

    /// The URL of database `name` on this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates database `name` (a copy of the server's template); its URL. On the
    /// shared cluster the name must be unique in the suite: two tests that chose the
    /// same one fail here, saying so.
    pub async fn database(&self, name: &str) -> String {
        let mut conn = sqlx::PgConnection::connect(&self.url("postgres"))
            .await
            .expect("connect to the test cluster");
        sqlx::raw_sql(&format!("CREATE DATABASE \"{name}\" TEMPLATE template1"))
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| {
                panic!("create database {name:?} (a name another test of the suite uses?): {e}")
            });
        conn.close().await.unwrap();
        self.made.lock().unwrap().push(name.to_owned());
        self.url(name)
    }
}

impl Running {
    fn start(name: &str, tls: Option<&Certs>) -> Running {
        let dir = Path::new(ROOT)
            .join("target/postgres")
            .join(format!("{name}-{}", std::process::id()));
        Self::start_in(dir, tls)
    }

    /// The shared cluster in `dir` an earlier pass of the suite started, when it runs.
    fn left_by_an_earlier_pass(dir: &Path) -> Option<Running> {
        let port = std::fs::read_to_string(dir.join("port"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let status = program("pg_ctl")
            .args(["-D", dir.to_str()?, "status"])
            .output()
            .ok()?;
        status.status.success().then(|| Running {
            dir: dir.to_owned(),
            port,
            options: String::new(),
        })
    }

    fn start_in(dir: PathBuf, tls: Option<&Certs>) -> Running {
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
        let mut options = format!(
            "-p {port} -h 127.0.0.1 -c unix_socket_directories='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        );
        if let Some(certs) = tls {
            // The server's key must be its own (and private) to be taken.
            for (from, to) in [(&certs.cert, "server.crt"), (&certs.key, "server.key")] {
                std::fs::copy(from, dir.join(to)).unwrap();
                if root() {
                    run(
                        Command::new("chown")
                            .args(["postgres:postgres", dir.join(to).to_str().unwrap()]),
                        "chown the server's certificate",
                    );
                }
            }
            run(
                Command::new("chmod").args(["600", dir.join("server.key").to_str().unwrap()]),
                "chmod the server's key",
            );
            std::fs::write(
                dir.join("pg_hba.conf"),
                "hostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n",
            )
            .unwrap();
            options.push_str(" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key");
        }
        let running = Running { dir, port, options };
        running.start_server();
        running
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

    /// Stops and removes the cluster once process `pid` has ended (however it ended):
    /// a process's statics are never dropped, so a small shell outlives it to do so.
    fn reaped_after(&self, pid: u32) {
        let pg_ctl = bin().join("pg_ctl");
        let as_postgres = if root() {
            "runuser -u postgres -- "
        } else {
            ""
        };
        let dir = self.dir.display();
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.2; done; {as_postgres}'{}' -D '{dir}' -m immediate stop; rm -rf '{dir}'",
            pg_ctl.display()
        );
        // Never waited for: it outlives this process by design (it ends after it).
        #[allow(clippy::zombie_processes)]
        Command::new("sh")
            .args(["-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the shared cluster's reaper");
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = program("pg_ctl")
            .args(["-D", self.dir.to_str().unwrap(), "-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for Cluster {
    /// On the shared cluster, the test's databases are dropped (connections to them
    /// cut); on a thread of its own, as this may run inside the test's runtime.
    fn drop(&mut self) {
        let Server::Shared = self.server else {
            return;
        };
        let made = std::mem::take(&mut *self.made.lock().unwrap_or_else(|p| p.into_inner()));
        if made.is_empty() {
            return;
        }
        let url = self.url("postgres");
        let dropping = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let Ok(mut conn) = sqlx::PgConnection::connect(&url).await else {
                    return;
                };
                for name in made {
                    let _ =
                        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                            .execute(&mut conn)
                            .await;
                }
                let _ = conn.close().await;
            });
        });
        let _ = dropping.join();
    }
}
