//! A networked game through a userspace delay proxy on 127.0.0.1: `phalanx host` and two
//! `phalanx join --bot` processes, each client's connection delayed 40 ms ± 10 ms each way, so a
//! round trip is about 80 ms on turns of 50 ms. The game must end in sync with one final hash,
//! and the automatic input delay must rise to cover the round trip.
//!
//! The kernel here has no `sch_netem`, so delay is added in userspace: the proxy holds every
//! chunk of bytes it reads until its release time and forwards the chunks in order (TCP's order
//! is kept; the jitter only spaces them). Loss is `netem.rs`'s, by nftables in a namespace. The
//! test prints every program's summary: its order latency lines are the figures BENCHMARKS.md
//! gives for delay (`cargo test --release -p phalanx-cli --test delay -- --nocapture`).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::{TOKENS, final_hash};

/// The one-way delay and its jitter. `[Units: milliseconds]`
const DELAY_MS: u64 = 40;
const JITTER_MS: u64 = 10;

/// A small deterministic generator for the jitter (xorshift), so no run depends on a clock's seed.
struct Jitter(u64);

impl Jitter {
    fn next_ms(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % (2 * JITTER_MS + 1)
    }
}

/// Copies `from` to `to`, each chunk read held until DELAY_MS - JITTER_MS + jitter after it
/// arrived and never before the chunk ahead of it; closes `to`'s sending side when `from` ends.
fn delayed_copy(mut from: TcpStream, mut to: TcpStream, seed: u64) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let reader = thread::spawn(move || {
        let mut jitter = Jitter(seed | 1);
        let mut last = Instant::now();
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let due = (Instant::now() + Duration::from_millis(DELAY_MS - JITTER_MS + jitter.next_ms())).max(last);
            last = due;
            if tx.send((due, buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    for (due, bytes) in rx {
        thread::sleep(due.saturating_duration_since(Instant::now()));
        if to.write_all(&bytes).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = reader.join();
}

/// Listens on a free loopback port and relays every connection to `target` with the delay both
/// ways; returns the port's address.
fn delay_proxy(target: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
    let addr = listener.local_addr().expect("the proxy's address");
    thread::spawn(move || {
        for (k, client) in listener.incoming().enumerate() {
            let Ok(client) = client else { continue };
            let Ok(host) = TcpStream::connect(target) else { continue };
            let _ = (client.set_nodelay(true), host.set_nodelay(true));
            let (c2, h2) = (client.try_clone().expect("clone"), host.try_clone().expect("clone"));
            let seed = 0x9e37_79b9_7f4a_7c15 ^ k as u64;
            thread::spawn(move || delayed_copy(client, host, seed));
            thread::spawn(move || delayed_copy(h2, c2, seed.rotate_left(17)));
        }
    });
    addr
}

#[test]
fn a_game_through_a_delay_proxy_ends_in_sync_and_the_input_delay_rises_to_cover_the_round_trip() {
    let dir = std::env::temp_dir().join(format!("phalanx-delay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (scenario, tokens) = (dir.join("game.json"), dir.join("tokens.txt"));
    std::fs::write(&scenario, common::scenario("delay", 17, 200)).expect("scenario file");
    std::fs::write(&tokens, TOKENS.join("\n")).expect("token file");
    let exe = env!("CARGO_BIN_EXE_phalanx");
    let mut host = Command::new(exe)
        .args(["host", scenario.to_str().expect("utf-8"), "--listen", "127.0.0.1:0", "--players", "2", "--turn-ms", "50"])
        .args(["--token-file", tokens.to_str().expect("utf-8")])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the host");
    let mut host_out = BufReader::new(host.stdout.take().expect("stdout"));
    let mut first = String::new();
    host_out.read_line(&mut first).expect("the host's first line");
    let addr: SocketAddr = first.trim().strip_prefix("listening on ").expect("the bound address").parse().expect("an address");
    let proxy = delay_proxy(addr).to_string();
    let joins: Vec<_> = (1..=2)
        .map(|seat| {
            Command::new(exe)
                .args(["join", &proxy, "--seat", &seat.to_string(), "--token", TOKENS[seat - 1], "--bot"])
                .stdout(Stdio::piped())
                .spawn()
                .expect("start a client")
        })
        .collect();
    let mut host_text = first;
    host_out.read_to_string(&mut host_text).expect("the host's output");
    assert!(host.wait().expect("host exit").success(), "{host_text}");
    let hash = final_hash(&host_text);
    assert_eq!(hash.len(), 64, "{host_text}");
    assert!(host_text.contains("turns 200 final hash"), "{host_text}");
    // A round trip of about 80 ms on 50 ms turns: the target delay is at least 1 + 80/50 rounded
    // up, 3 turns, above the starting 2.
    let highest = host_text
        .lines()
        .filter_map(|l| l.strip_prefix("delay changed: ")?.split(' ').next()?.parse::<u32>().ok())
        .max()
        .unwrap_or_default();
    assert!(highest >= 3, "the input delay rose to cover the round trip: {host_text}");
    println!("one-way delay {DELAY_MS} ms ± {JITTER_MS} ms, 50 ms turns\nhost:\n{host_text}");
    for (seat, join) in (1..).zip(joins) {
        let output = join.wait_with_output().expect("client exit");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{text}");
        assert_eq!(final_hash(&text), hash, "{text}");
        assert!(text.contains("ended after 200 turns, in sync"), "{text}");
        assert!(text.contains("order latency: median"), "the bot ordered: {text}");
        println!("seat {seat}:\n{text}");
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}
