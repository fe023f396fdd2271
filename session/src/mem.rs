//! An in-memory transport on a virtual clock, and a whole game played over it.
//!
//! [`MemNet`] models TCP as the session's real transport will be: each connection is reliable and
//! ordered, with a seeded latency and jitter, and a lost segment costs a retransmission timeout
//! (it arrives late, and holds back what follows it). On top of that, the network may break the
//! order (a frame overtakes earlier ones) and duplicate frames, faults TCP never shows but that
//! the protocol's sequence numbers absorb anyway ([`crate::Link`]). Everything is
//! decided by the seed: the same seed gives the same deliveries at the same virtual times.

use crate::Error;
use std::collections::{BTreeMap, BTreeSet};

use replay::scenario::Scenario;
use sim::Command;
use sim::digest_tree::Digest;

use crate::client::{Brain, ClientCore};
use crate::host::{ConnId, HostCore, HostEvent};

/// The network's faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetConfig {
    /// One-way latency, ms.
    pub latency_ms: u64,
    /// Extra latency drawn uniformly from `0..=jitter_ms`.
    pub jitter_ms: u64,
    /// Percent chance that a frame is lost and sent again after `rto_ms` (repeatedly).
    pub loss_pct: u64,
    /// The retransmission timeout, ms.
    pub rto_ms: u64,
    /// Percent chance that a frame may overtake the frames sent before it.
    pub reorder_pct: u64,
    /// Percent chance that a frame arrives twice.
    pub dup_pct: u64,
}

/// Which way a frame travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dir {
    /// From a client's connection to the host.
    ToHost(ConnId),
    /// From the host to a client's connection.
    ToClient(ConnId),
}

/// A seeded network of frames in flight.
#[derive(Debug)]
pub struct MemNet {
    config: NetConfig,
    state: u64,
    serial: u64,
    in_flight: BTreeMap<(u64, u64), (Dir, Vec<u8>)>,
    /// The latest delivery time scheduled per direction, which in-order frames may not precede.
    last: BTreeMap<Dir, u64>,
}

impl MemNet {
    /// A network with these faults, deciding them from `seed`.
    pub fn new(config: NetConfig, seed: u64) -> Self {
        Self { config, state: seed, serial: 0, in_flight: BTreeMap::new(), last: BTreeMap::new() }
    }

    /// A splitmix64 step.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn chance(&mut self, pct: u64) -> bool {
        pct > 0 && self.next() % 100 < pct
    }

    fn jitter(&mut self) -> u64 {
        let j = self.config.jitter_ms;
        if j == 0 { 0 } else { self.next() % (j + 1) }
    }

    fn schedule(&mut self, at: u64, dir: Dir, bytes: Vec<u8>) {
        self.serial += 1;
        self.in_flight.insert((at, self.serial), (dir, bytes));
    }

    /// Sends a frame at virtual time `now`.
    pub fn send(&mut self, dir: Dir, bytes: Vec<u8>, now: u64) {
        let mut at = now + self.config.latency_ms + self.jitter();
        // At most eight retransmissions, as a bounded stand-in for TCP's back-off.
        for _ in 0..8 {
            if !self.chance(self.config.loss_pct) {
                break;
            }
            at += self.config.rto_ms;
        }
        if !self.chance(self.config.reorder_pct) {
            at = at.max(self.last.get(&dir).copied().unwrap_or(0));
        }
        let last = self.last.entry(dir).or_insert(0);
        *last = (*last).max(at);
        if self.chance(self.config.dup_pct) {
            let copy_at = at + 1 + self.jitter();
            self.schedule(copy_at, dir, bytes.clone());
        }
        self.schedule(at, dir, bytes);
    }

    /// The frames due by `now`, in delivery order.
    pub fn due(&mut self, now: u64) -> Vec<(Dir, Vec<u8>)> {
        let later = self.in_flight.split_off(&(now + 1, 0));
        std::mem::replace(&mut self.in_flight, later).into_values().collect()
    }

    /// Whether no frame is in flight.
    pub fn is_idle(&self) -> bool {
        self.in_flight.is_empty()
    }
}

/// A client in a [`MemGame`].
pub struct MemClient {
    /// Its connection.
    pub conn: ConnId,
    /// Its state machine.
    pub core: ClientCore,
    /// Who plays its seat.
    pub brain: Box<dyn Brain>,
    /// After stepping this many turns the client freezes: it reads, steps and sends nothing more
    /// (a peer that lags for good).
    pub freeze_after: Option<u32>,
    /// Whether the host closed its connection.
    pub cut: bool,
}

/// A connection that sends fixed frames at fixed times and reads nothing: a misbehaving peer.
pub struct RawPeer {
    /// Its connection.
    pub conn: ConnId,
    /// `(virtual time, frame)`, in time order.
    pub frames: Vec<(u64, Vec<u8>)>,
}

/// A host and its clients over a [`MemNet`], on a virtual clock.
pub struct MemGame<'s> {
    /// The network.
    pub net: MemNet,
    /// The host.
    pub host: HostCore<'s>,
    /// The clients.
    pub clients: Vec<MemClient>,
    /// Misbehaving peers.
    pub raw: Vec<RawPeer>,
    /// Every event the host logged.
    pub host_events: Vec<HostEvent>,
    /// The virtual time, ms.
    pub now: u64,
    /// Virtual milliseconds per loop.
    pub tick_ms: u64,
    closed: BTreeSet<ConnId>,
    /// Connections cut by [`MemGame::disconnect`]: frames still in flight to them are lost.
    severed: BTreeSet<ConnId>,
    next_conn: ConnId,
}

impl<'s> MemGame<'s> {
    /// A game of `host` over `net`, advancing the clock by `tick_ms` per loop.
    pub fn new(host: HostCore<'s>, net: MemNet, tick_ms: u64) -> Self {
        Self {
            net,
            host,
            clients: Vec::new(),
            raw: Vec::new(),
            host_events: Vec::new(),
            now: 0,
            tick_ms: tick_ms.max(1),
            closed: BTreeSet::new(),
            severed: BTreeSet::new(),
            next_conn: 0,
        }
    }

    fn connect(&mut self) -> ConnId {
        let conn = self.next_conn;
        self.next_conn += 1;
        self.host.on_connect(conn);
        conn
    }

    /// Connects a client played by `brain`; returns its index in [`MemGame::clients`].
    pub fn add_client(&mut self, core: ClientCore, brain: Box<dyn Brain>, freeze_after: Option<u32>) -> usize {
        let conn = self.connect();
        self.clients.push(MemClient { conn, core, brain, freeze_after, cut: false });
        self.clients.len() - 1
    }

    /// Connects a peer that sends `frames` at their times.
    pub fn add_raw(&mut self, frames: Vec<(u64, Vec<u8>)>) -> ConnId {
        let conn = self.connect();
        self.raw.push(RawPeer { conn, frames });
        conn
    }

    /// Cuts a client's connection at the current time, as a network failure does: the host sees
    /// it gone, and nothing more travels either way on it. The client's state machine stays, so a
    /// test can read what it stepped; a reconnection is a new client ([`MemGame::add_client`]).
    pub fn disconnect(&mut self, index: usize) {
        let Some(c) = self.clients.get_mut(index) else { return };
        c.cut = true;
        let conn = c.conn;
        self.closed.insert(conn);
        self.severed.insert(conn);
        self.host.on_disconnect(conn, self.now);
    }

    /// Whether the host closed a connection.
    pub fn is_closed(&self, conn: ConnId) -> bool {
        self.closed.contains(&conn)
    }

    fn frozen(client: &MemClient) -> bool {
        client.freeze_after.is_some_and(|n| client.core.hashes().len() >= n as usize)
    }

    /// Runs until the host's game is over and the network is quiet, or until `limit_ms` of
    /// virtual time; returns whether the game is over.
    pub fn run(&mut self, limit_ms: u64) -> bool {
        while self.now <= limit_ms {
            self.step_once();
            if self.host.is_over() && self.net.is_idle() {
                return true;
            }
            self.now += self.tick_ms;
        }
        self.host.is_over()
    }

    fn step_once(&mut self) {
        let now = self.now;
        for (dir, bytes) in self.net.due(now) {
            match dir {
                Dir::ToHost(conn) => self.host.on_frame(conn, &bytes, now),
                Dir::ToClient(conn) => {
                    if let Some(c) = self.clients.iter_mut().find(|c| c.conn == conn)
                        && !Self::frozen(c)
                        && !self.severed.contains(&conn)
                    {
                        c.core.on_frame(&bytes);
                    }
                }
            }
        }
        for raw in &mut self.raw {
            let due = raw.frames.iter().take_while(|(at, _)| *at <= now).count();
            for (_, bytes) in raw.frames.drain(..due) {
                if !self.closed.contains(&raw.conn) {
                    self.net.send(Dir::ToHost(raw.conn), bytes, now);
                }
            }
        }
        for c in &mut self.clients {
            if !Self::frozen(c) {
                c.core.tick(now);
                c.core.step_ready(now, c.brain.as_mut());
            }
        }
        self.host.tick(now);
        let out = self.host.take_output();
        for (conn, frame) in out.frames {
            self.net.send(Dir::ToClient(conn), frame, now);
        }
        for conn in out.close {
            self.closed.insert(conn);
            if let Some(c) = self.clients.iter_mut().find(|c| c.conn == conn) {
                c.cut = true;
            }
        }
        self.host_events.extend(out.events);
        for c in &mut self.clients {
            let frames = c.core.take_frames();
            if !self.closed.contains(&c.conn) && !Self::frozen(c) {
                for frame in frames {
                    self.net.send(Dir::ToHost(c.conn), frame, now);
                }
            }
        }
    }
}

/// The hashes of a single-process run of a command stream from the scenario's world: the oracle
/// every peer's hashes are checked against.
///
/// # Errors
/// When the scenario's world cannot be built.
pub fn single_process_hashes(scenario: &Scenario, history: &[Vec<Command>]) -> Result<Vec<Digest>, Error> {
    let mut world = scenario.world()?;
    Ok(history.iter().map(|commands| world.step(commands).hash).collect())
}
