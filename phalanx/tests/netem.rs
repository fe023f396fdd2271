//! A networked game across a real network stack: the host and two bot clients run in two network
//! namespaces joined by a veth pair that loses and delays packets, and the game must end in sync
//! with one final hash and a replay that verifies.
//!
//! The faults are `tc netem` delay, jitter and loss on both ends where the kernel has `sch_netem`;
//! a kernel without it (such as this project's CI machine) gets random loss from an nftables rule
//! on both ends instead, which TCP turns into retransmission delays of 200 ms and more, and the
//! test prints which it used.
//! Creating namespaces needs root, `ip` (iproute2) and `nft` (nftables). Without root the test
//! prints that it was skipped and why; under `CI=true` a missing tool fails it, since `.ci/run`
//! installs both.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};

use common::{TOKENS, final_hash};

const SCENARIO: &str = r#"{"format": "phalanx-scenario", "version": 3, "name": "netem", "turns": 60,
  "settings": {"players": 2, "seed": 11}, "map": {"generated": {"tiles": 16, "seed": 3}},
  "units": [
    {"name": "a", "player": 1, "class": "default", "at": [20, 20], "count": 4, "radius": 0.5, "speed": 8},
    {"name": "b", "player": 2, "class": "default", "at": [44, 44], "count": 4, "radius": 0.5, "speed": 8}
  ]}"#;

/// The faults both ends of the link add, as `tc netem` arguments: 25 ms each way with 10 ms of
/// jitter and 2% loss, so a round trip is about 50 ms and TCP must retransmit.
const NETEM: [&str; 6] = ["delay", "25ms", "10ms", "loss", "2%", "25%"];

fn run(args: &[&str]) -> Output {
    Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("cannot run {args:?}: {e}"))
}

fn ok(args: &[&str]) {
    let out = run(args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// Two namespaces and the veth pair between them, deleted when dropped (deleting a namespace
/// deletes its end of the pair, and with it the other end).
struct Link {
    host_ns: String,
    client_ns: String,
}

impl Drop for Link {
    fn drop(&mut self) {
        for ns in [&self.host_ns, &self.client_ns] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// Kills a child process still running when a failed assertion unwinds past it.
struct Reaper(Option<Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Reaper {
    fn output(mut self) -> Output {
        self.0.take().expect("a child").wait_with_output().expect("the child's exit")
    }
}

/// Sets up the link, or says why it cannot (as the reason to print for a skip).
fn link() -> Result<Link, String> {
    for (tool, package) in [("ip", "iproute2"), ("nft", "nftables")] {
        if Command::new(tool).arg("-V").output().is_err() {
            if std::env::var_os("CI").is_some_and(|v| v == "true") {
                panic!("the `{tool}` tool ({package}) is missing, and .ci/run installs it");
            }
            return Err(format!("the `{tool}` tool ({package}) is not installed"));
        }
    }
    let id = std::process::id();
    let link = Link { host_ns: format!("phxh{id}"), client_ns: format!("phxc{id}") };
    let made = run(&["ip", "netns", "add", &link.host_ns]);
    if !made.status.success() {
        return Err(format!("cannot create a network namespace (root is needed): {}", String::from_utf8_lossy(&made.stderr).trim()));
    }
    ok(&["ip", "netns", "add", &link.client_ns]);
    let (a, b) = (format!("phx{id}a"), format!("phx{id}b"));
    ok(&["ip", "link", "add", &a, "netns", &link.host_ns, "type", "veth", "peer", "name", &b, "netns", &link.client_ns]);
    for (ns, dev, addr) in [(&link.host_ns, &a, "10.213.0.1/30"), (&link.client_ns, &b, "10.213.0.2/30")] {
        ok(&["ip", "-n", ns, "addr", "add", addr, "dev", dev]);
        ok(&["ip", "-n", ns, "link", "set", dev, "up"]);
        ok(&["ip", "-n", ns, "link", "set", "lo", "up"]);
    }
    Ok(link)
}

/// The nftables rule set that drops this share of every packet sent, in percent, where netem is
/// missing.
const LOSS_RULES: &str = "table inet phalanx_netem {
  chain out {
    type filter hook output priority 0; policy accept;
    numgen random mod 100 < 3 drop
  }
}
";

/// Adds random loss with nftables to both ends.
fn add_nft_loss(link: &Link) {
    for ns in [&link.host_ns, &link.client_ns] {
        let mut nft = Command::new("ip").args(["netns", "exec", ns, "nft", "-f", "-"]).stdin(Stdio::piped()).spawn().expect("start nft");
        std::io::Write::write_all(&mut nft.stdin.take().expect("stdin"), LOSS_RULES.as_bytes()).expect("nft rules");
        assert!(nft.wait().expect("nft exit").success(), "nft refused the loss rules");
    }
}

/// Adds the netem faults to both ends, or says why they cannot be added.
fn add_netem(link: &Link) -> Result<(), String> {
    let id = std::process::id();
    for (ns, dev) in [(&link.host_ns, format!("phx{id}a")), (&link.client_ns, format!("phx{id}b"))] {
        let mut args = vec!["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", &dev, "root", "netem"];
        args.extend(NETEM);
        let out = Command::new(args[0]).args(&args[1..]).output().map_err(|e| format!("cannot run tc: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`tc qdisc add ... netem` failed (the kernel has no sch_netem?): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    Ok(())
}

#[test]
fn a_game_across_two_network_namespaces_that_lose_packets_ends_in_sync() {
    let link = match link() {
        Ok(link) => link,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    match add_netem(&link) {
        Ok(()) => println!("faults: netem on both ends: {}", NETEM.join(" ")),
        Err(why) => {
            add_nft_loss(&link);
            println!("faults: 3% loss by nftables on both ends, no netem: {why}");
        }
    }
    let dir = std::env::temp_dir().join(format!("phalanx-netem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (scenario, tokens, replay) = (dir.join("game.json"), dir.join("tokens.txt"), dir.join("game.replay"));
    std::fs::write(&scenario, SCENARIO).expect("scenario file");
    std::fs::write(&tokens, TOKENS.join("\n")).expect("token file");
    let exe = env!("CARGO_BIN_EXE_phalanx");
    let mut host = Reaper(Some(
        Command::new("ip")
            .args(["netns", "exec", &link.host_ns, exe, "host", scenario.to_str().expect("utf-8")])
            .args(["--listen", "10.213.0.1:0", "--players", "2", "--turn-ms", "50"])
            .args(["--token-file", tokens.to_str().expect("utf-8"), "--record", replay.to_str().expect("utf-8")])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the host"),
    ));
    let mut host_out = BufReader::new(host.0.as_mut().expect("host").stdout.take().expect("stdout"));
    let mut first = String::new();
    host_out.read_line(&mut first).expect("the host's first line");
    let addr = first.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("no bound address in {first:?}")).to_owned();
    let joins: Vec<_> = (1..=2)
        .map(|seat| {
            Reaper(Some(
                Command::new("ip")
                    .args(["netns", "exec", &link.client_ns, exe, "join", &addr, "--seat", &seat.to_string()])
                    .args(["--token", TOKENS[seat - 1], "--bot"])
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("start a client"),
            ))
        })
        .collect();
    let mut host_text = first;
    host_out.read_to_string(&mut host_text).expect("the host's output");
    let host_exit = host.output();
    assert!(host_exit.status.success(), "{host_text}");
    let hash = final_hash(&host_text);
    assert_eq!(hash.len(), 64, "{host_text}");
    assert!(host_text.contains("turns 60 final hash"), "{host_text}");
    for join in joins {
        let output = join.output();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{text}");
        assert_eq!(final_hash(&text), hash, "{text}");
        // Each client's summary, with its order latency: the figures BENCHMARKS.md gives for loss.
        println!("client:\n{text}");
    }
    let mut out = Vec::new();
    let code = phalanx_cli::run(["phalanx", "verify", replay.to_str().expect("utf-8")], &mut out, &mut Vec::new());
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&out));
    println!("host:\n{host_text}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}
