//! A client's state machine: it claims a seat, builds the world from the host's scenario, steps
//! each turn once it holds the turn's command set, reports its hashes, sends its player's commands
//! and answers the host's questions about a desync.
//!
//! [`ClientCore`] does no I/O and reads no clock: the caller feeds it frames and the time in
//! milliseconds, and takes back frames to send and events to log. A [`Brain`] plays the seat.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use replay::format::ReplayWriter;
use replay::rules::Rulesets;
use replay::scenario::Scenario;
use sim::digest_tree::Digest;
use sim::{Command, PlayerId, TurnReport, World};

use crate::host::CLIENT_SEQ_BASE;
use crate::orders::Refusal;
use crate::protocol::{
    Chunk, ClientMsg, HostMsg, Link, MAX_COMMANDS_PER_TURN, OBSERVER_SEAT, Order, PROTOCOL_VERSION, Reassembly, TOKEN_BYTES, Token,
    Waiting, chunks,
};
use crate::recorder::Recorder;
use crate::stats::{Latency, Traffic};

/// The most turns a client holds ahead of the one it steps next; a host sending more is closed.
pub const MAX_HELD_TURNS: usize = 4096;

/// The most orders whose send times a client keeps while it waits to see them applied.
const MAX_ISSUED: usize = 4096;

/// The most questions from the host held until the next step; past it a question gets an empty
/// answer at once.
const MAX_ASKED: usize = 8;

/// Whoever plays a seat: reads the world after each turn and gives the seat's commands.
pub trait Brain {
    /// The commands to send after the world stepped the turn of `report`.
    fn think(&mut self, world: &World, report: &TurnReport) -> Vec<Order>;

    /// Called with the world just before it steps `turn`: a test hook that may perturb it.
    fn before_step(&mut self, _world: &mut World, _turn: u32) {}

    /// The hash to report for `turn`, given the world's: a test hook that may lie (a peer
    /// sending false hashes, whose world is the host's all the same).
    fn hash_to_report(&mut self, _turn: u32, hash: Digest) -> Digest {
        hash
    }
}

/// A brain that never commands: an idle seat.
pub struct Idle;

impl Brain for Idle {
    fn think(&mut self, _world: &World, _report: &TurnReport) -> Vec<Order> {
        Vec::new()
    }
}

/// Something the client saw, for its log: one line each ([`fmt::Display`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientEvent {
    /// The host granted the seat and the world is built.
    Welcomed {
        /// The seat.
        seat: u8,
    },
    /// The input delay changed from this turn on.
    DelayChanged {
        /// The turn.
        turn: u32,
        /// The new delay, in turns.
        delay: u32,
    },
    /// The host dropped a seat.
    Dropped {
        /// The seat.
        seat: u8,
    },
    /// A seat that had left plays again.
    Rejoined {
        /// The seat.
        seat: u8,
    },
    /// The client records no replay of its own, and why.
    NotRecording {
        /// Why.
        reason: String,
    },
    /// The turn the host asked about, simulated again here from the kept snapshot, does not have
    /// the hash this peer had after it: this peer does not reproduce its own state.
    NotReproduced {
        /// The turn.
        turn: u32,
    },
    /// The world was replaced by the host's (a rejoin, a late observer, a resync).
    Loaded {
        /// The first turn stepped on it.
        from: u32,
    },
    /// The game is over.
    Ended {
        /// Turns played.
        turns: u32,
        /// Whether the host saw every hash agree.
        in_sync: bool,
    },
    /// The host refused one of this client's orders: it will never apply.
    Refused {
        /// The order's place among every order this client sent, from 0.
        order: u32,
        /// Why.
        refusal: Refusal,
    },
    /// What the game waits for, as the host said.
    Waiting(Waiting),
    /// An order of the brain's, or a message, was not sent: the host could not take it.
    NotSent {
        /// Why.
        refusal: Refusal,
    },
    /// The connection is finished: the host said goodbye, or the client found the host at fault.
    Closed {
        /// Why.
        reason: String,
    },
}

/// How a client's game ended, one way each, with one line for it ([`fmt::Display`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The host announced the game's end.
    Ended {
        /// Turns played.
        turns: u32,
        /// Whether the host saw every hash agree.
        in_sync: bool,
    },
    /// The host refused the seat or the observer before welcoming it.
    Refused {
        /// The host's reason.
        reason: String,
    },
    /// The host closed the connection during the game (a drop, a flood, a false hash...).
    Kicked {
        /// The host's reason.
        reason: String,
    },
    /// The connection to the host was lost.
    HostGone {
        /// What the transport saw.
        reason: String,
    },
    /// The host sent nothing for too long, its connection still open (a half-open connection).
    HostSilent {
        /// How long it was silent. `[Units: milliseconds]`
        silent_ms: u64,
    },
    /// The client closed the connection: the host sent something it could not accept.
    Fault {
        /// Why.
        reason: String,
    },
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ended { turns, in_sync } => write!(f, "ended after {turns} turns, {}", if *in_sync { "in sync" } else { "DESYNC" }),
            Self::Refused { reason } => write!(f, "refused by the host: {reason}"),
            Self::Kicked { reason } => write!(f, "closed by the host: {reason}"),
            Self::HostGone { reason } => write!(f, "the host is gone: {reason}"),
            Self::HostSilent { silent_ms } => {
                write!(f, "the host has sent nothing for {}.{} s: giving up", silent_ms / 1000, silent_ms % 1000 / 100)
            }
            Self::Fault { reason } => write!(f, "left the game: {reason}"),
        }
    }
}

impl fmt::Display for ClientEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Welcomed { seat: OBSERVER_SEAT } => write!(f, "joined: observing"),
            Self::Welcomed { seat } => write!(f, "joined: playing seat {seat}"),
            Self::Rejoined { seat } => write!(f, "rejoined: seat {seat} plays again"),
            Self::NotRecording { reason } => write!(f, "not recording: {reason}"),
            Self::NotReproduced { turn } => {
                write!(
                    f,
                    "desync: turn {turn} simulated again here does not have the hash this peer had; this peer is not deterministic on its own"
                )
            }
            Self::Loaded { from } => write!(f, "loaded the host's world, stepping from turn {from}"),
            Self::DelayChanged { turn, delay } => write!(f, "delay changed: {delay} turns from turn {turn}"),
            Self::Dropped { seat } => write!(f, "left: seat {seat} was dropped, its units stay idle"),
            Self::Ended { turns, in_sync } => write!(f, "ended after {turns} turns, {}", if *in_sync { "in sync" } else { "DESYNC" }),
            Self::Refused { order, refusal } => write!(f, "refused: order {order}: {refusal}"),
            Self::Waiting(waiting) => write!(f, "{waiting}"),
            Self::NotSent { refusal } => write!(f, "not sent: {refusal}"),
            Self::Closed { reason } => write!(f, "closed: {reason}"),
        }
    }
}

/// A client.
pub struct ClientCore {
    seat: u8,
    link: Link<HostMsg>,
    world: Option<World>,
    /// Turns received and not yet stepped: turn → commands.
    held: BTreeMap<u32, Vec<Command>>,
    /// The next turn to step.
    next: u32,
    delay: Option<u32>,
    /// The turn of `hashes[0]`: 0, or the turn the host's world was loaded at.
    first: u32,
    hashes: Vec<Digest>,
    /// A `Load` announced: the turn to step from and the hash of the world that comes in chunks.
    loading: Option<(u32, Digest)>,
    incoming: Reassembly,
    /// What the client keeps to answer the host's questions about a turn not yet agreed.
    recorder: Recorder,
    /// The host's questions not yet answered: a turn, and whether it asked for the snapshot
    /// (else the digest leaves). They are answered by [`ClientCore::step_ready`], which has the
    /// brain whose hook the turns are simulated again with.
    asked: Vec<(u32, bool)>,
    /// When each order sent and not yet seen applied was sent (ms), oldest first.
    issued: VecDeque<u64>,
    latency: Latency,
    traffic: Traffic,
    /// Keyframes every this many turns in the client's own replay; 0 records none.
    record_every: u32,
    /// The client's own replay, while it records.
    replay: Option<ReplayWriter<Vec<u8>>>,
    ended: Option<(u32, bool)>,
    closed: bool,
    /// How the game ended for this client, once it did.
    ending: Option<Ending>,
    /// What the host last said the game waits for, since the last turn.
    last_waiting: Option<Waiting>,
    /// Whether a frame arrived since the last [`ClientCore::tick`], and when one last did.
    heard: bool,
    last_heard_ms: Option<u64>,
    /// Giving up on a host silent this long; `None` waits for ever. `[Units: milliseconds]`
    host_timeout_ms: Option<u64>,
    last_step_ms: u64,
    frames: Vec<Vec<u8>>,
    events: Vec<ClientEvent>,
    /// The game rulesets the host's scenario may name (none: only worlds without game rules).
    rulesets: Rulesets,
}

impl ClientCore {
    /// A client for `seat` with its token; its first frame, `Hello`, is ready at once.
    pub fn new(seat: u8, token: Token) -> Self {
        let mut client = Self {
            seat,
            link: Link::default(),
            world: None,
            held: BTreeMap::new(),
            next: 0,
            delay: None,
            first: 0,
            hashes: Vec::new(),
            loading: None,
            incoming: Reassembly::default(),
            recorder: Recorder::default(),
            asked: Vec::new(),
            issued: VecDeque::new(),
            latency: Latency::default(),
            traffic: Traffic::default(),
            record_every: 0,
            replay: None,
            ended: None,
            closed: false,
            ending: None,
            last_waiting: None,
            heard: false,
            last_heard_ms: None,
            host_timeout_ms: None,
            last_step_ms: 0,
            frames: Vec::new(),
            events: Vec::new(),
            rulesets: Rulesets::none(),
        };
        client.send(ClientMsg::Hello { version: PROTOCOL_VERSION, seat, token });
        client
    }

    /// This client, able to build the world of a scenario with any of `rulesets`' game rules
    /// (the host's scenario names its rules; without them the client refuses it).
    #[must_use]
    pub fn with_rulesets(mut self, rulesets: Rulesets) -> Self {
        self.rulesets = rulesets;
        self
    }

    /// This client, giving up with [`Ending::HostSilent`] on a host that sends nothing for
    /// `timeout_ms` (a host sends something at least every second: a turn, a ping or what the
    /// game waits for).
    #[must_use]
    pub fn with_host_timeout(mut self, timeout_ms: u64) -> Self {
        self.host_timeout_ms = Some(timeout_ms);
        self
    }

    /// How the game ended for this client, once it did.
    pub fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    /// Advances the client's clock: a host silent for longer than the timeout is given up on.
    pub fn tick(&mut self, now: u64) {
        let last = *self.last_heard_ms.get_or_insert(now);
        if std::mem::take(&mut self.heard) {
            self.last_heard_ms = Some(now);
            return;
        }
        if let Some(limit) = self.host_timeout_ms
            && self.ending.is_none()
            && now.saturating_sub(last) > limit
        {
            self.end_with(Ending::HostSilent { silent_ms: now.saturating_sub(last) });
        }
    }

    /// The transport lost the connection to the host.
    pub fn on_lost(&mut self, reason: String) {
        self.end_with(Ending::HostGone { reason });
    }

    fn end_with(&mut self, ending: Ending) {
        if self.ending.is_none() {
            if !matches!(ending, Ending::Ended { .. }) {
                self.fail_quietly();
                self.events.push(ClientEvent::Closed { reason: ending.to_string() });
            }
            self.ending = Some(ending);
        }
    }

    fn fail_quietly(&mut self) {
        self.closed = true;
    }

    /// The frames to send, in order.
    pub fn take_frames(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.frames)
    }

    /// The events since the last call.
    pub fn take_events(&mut self) -> Vec<ClientEvent> {
        std::mem::take(&mut self.events)
    }

    /// An observer: it asks for no seat, sends no commands, and steps and hashes every turn.
    pub fn observer() -> Self {
        Self::new(OBSERVER_SEAT, [0; TOKEN_BYTES])
    }

    /// Records the game this client plays into a replay of its own, with a keyframe every
    /// `keyframe_every` turns ([`ClientCore::finish_replay`]). Only a client that steps the game
    /// from its first turn records: one that joins later or loads the host's world says why not.
    #[must_use]
    pub fn with_record(mut self, keyframe_every: u32) -> Self {
        self.record_every = keyframe_every.max(1);
        self
    }

    /// The client's own replay, finished with a keyframe of its world as it is now; `None` when
    /// it did not record.
    pub fn finish_replay(&mut self) -> Option<Vec<u8>> {
        let mut writer = self.replay.take()?;
        if let Some(world) = &self.world {
            // Writing into memory cannot fail.
            let _ = writer.keyframe(world);
        }
        writer.finish().ok()
    }

    fn stop_recording(&mut self, reason: String) {
        if self.record_every > 0 {
            self.record_every = 0;
            self.replay = None;
            self.events.push(ClientEvent::NotRecording { reason });
        }
    }

    /// The bytes this client sent and received.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// The time from sending each order to stepping the turn that applied it (ms, the transport's
    /// clock), over the orders seen applied.
    pub fn order_latency(&self) -> &Latency {
        &self.latency
    }

    /// The hash after every turn stepped since [`ClientCore::first_turn`].
    pub fn hashes(&self) -> &[Digest] {
        &self.hashes
    }

    /// The turn of the first of [`ClientCore::hashes`]: 0, or the turn from which the client
    /// steps the host's world it loaded last (on a rejoin, a late observation or a resync).
    pub fn first_turn(&self) -> u32 {
        self.first
    }

    /// The turns stepped: the first turn not yet stepped.
    pub fn turns_stepped(&self) -> u32 {
        self.next
    }

    /// The world, once welcomed.
    pub fn world(&self) -> Option<&World> {
        self.world.as_ref()
    }

    /// The game's end as the host announced it: turns played and whether they were in sync.
    pub fn ended(&self) -> Option<(u32, bool)> {
        self.ended
    }

    /// Whether the connection is finished (closed by the host, or the host misbehaved).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// How long the client has waited for its next turn (ms since its last step).
    pub fn waiting_ms(&self, now: u64) -> u64 {
        now.saturating_sub(self.last_step_ms)
    }

    /// The seat this client plays.
    pub fn seat(&self) -> u8 {
        self.seat
    }

    /// The seat's player.
    pub fn player(&self) -> PlayerId {
        PlayerId(self.seat)
    }

    /// Sends a message; one over the frame limit is not sent, and says so.
    fn send(&mut self, msg: ClientMsg) {
        if self.closed {
            return;
        }
        match self.link.try_encode(msg) {
            Ok(frame) => {
                self.traffic.sent(frame.len());
                self.frames.push(frame);
            }
            Err(e) => {
                let bytes = if let crate::protocol::ProtocolError::Oversized(n) = e { n as u64 } else { u64::MAX };
                let refusal = Refusal::TooLarge { bytes, limit: crate::protocol::MAX_FRAME as u64 };
                self.events.push(ClientEvent::NotSent { refusal });
            }
        }
    }

    fn fail(&mut self, reason: String) {
        if !self.closed {
            self.end_with(Ending::Fault { reason });
        }
    }

    /// A frame from the host. Turns it completes are stepped by [`ClientCore::step_ready`].
    pub fn on_frame(&mut self, bytes: &[u8]) {
        if self.closed {
            return;
        }
        self.traffic.received(bytes.len());
        self.heard = true;
        match self.link.accept(bytes) {
            Ok(msgs) => msgs.into_iter().for_each(|m| self.on_message(m)),
            Err(e) => self.fail(format!("from the host: {e}")),
        }
    }

    fn on_message(&mut self, msg: HostMsg) {
        match msg {
            HostMsg::Welcome { version, seat, scenario, start_hash, from } => self.welcome(version, seat, &scenario, start_hash, from),
            HostMsg::Turn { turn, delay, agreed, commands } => {
                self.recorder.agreed(agreed.min(self.next));
                if self.delay != Some(delay) {
                    if self.delay.is_some() {
                        self.events.push(ClientEvent::DelayChanged { turn, delay });
                    }
                    self.delay = Some(delay);
                }
                // The wait, if any, is over: the next one is told again.
                self.last_waiting = None;
                // A copy of a turn already held or stepped changes nothing.
                if turn >= self.next {
                    self.held.entry(turn).or_insert(commands);
                }
                if self.held.len() > MAX_HELD_TURNS {
                    self.fail(format!("the host sent more than {MAX_HELD_TURNS} turns ahead"));
                }
            }
            HostMsg::Ping { id } => self.send(ClientMsg::Pong { id }),
            // At most [`MAX_ASKED`] questions wait for the next step, so a host asking again and
            // again cannot grow the list.
            HostMsg::AskDigests { turn } => self.ask(turn, false),
            HostMsg::AskSnapshot { turn } => self.ask(turn, true),
            HostMsg::Dropped { seat } => self.events.push(ClientEvent::Dropped { seat }),
            HostMsg::Rejoined { seat } => self.events.push(ClientEvent::Rejoined { seat }),
            HostMsg::Load { from, hash } => {
                if self.loading.is_some() {
                    return self.fail("a second Load before the first snapshot arrived".to_owned());
                }
                self.loading = Some((from, hash));
            }
            HostMsg::Snapshot(chunk) => self.chunk(chunk),
            HostMsg::End { turns, in_sync } => {
                self.ended = Some((turns, in_sync));
                self.end_with(Ending::Ended { turns, in_sync });
                self.events.push(ClientEvent::Ended { turns, in_sync });
            }
            HostMsg::Bye { reason } if self.ended.is_some() => {
                // The host's goodbye after its `End`: the game ended as announced.
                self.closed = true;
                let _ = reason;
            }
            HostMsg::Bye { reason } if self.world.is_none() => self.end_with(Ending::Refused { reason }),
            HostMsg::Bye { reason } => self.end_with(Ending::Kicked { reason }),
            HostMsg::Refused { order, refusal } => {
                // A refused order never applies: its send time is not waited on.
                self.issued.pop_back();
                self.events.push(ClientEvent::Refused { order, refusal });
            }
            HostMsg::Waiting(waiting) => {
                // The lobby and a desync are told every second: a line when they change. A late
                // seat gets a line each time, its lag growing toward the drop.
                if self.last_waiting.as_ref() != Some(&waiting) {
                    self.last_waiting = Some(waiting.clone());
                    self.events.push(ClientEvent::Waiting(waiting));
                }
            }
        }
    }

    /// A chunk of the host's world: acknowledged at once; the last one replaces the world.
    fn chunk(&mut self, chunk: Chunk) {
        let index = chunk.index;
        let Some((from, hash)) = self.loading else {
            return self.fail("a snapshot chunk without a Load".to_owned());
        };
        self.send(ClientMsg::Got { index });
        let bytes = match self.incoming.accept(chunk) {
            Ok(Some((turn, _))) if turn != from => return self.fail(format!("a snapshot of turn {turn} for a Load from turn {from}")),
            Ok(Some((_, bytes))) => bytes,
            Ok(None) => return,
            Err(reason) => return self.fail(format!("from the host: {reason}")),
        };
        self.loading = None;
        let Some(world) = self.world.as_ref() else {
            return self.fail("a snapshot before the welcome".to_owned());
        };
        match world.load_like(&bytes) {
            Ok(loaded) if loaded.state_hash() == hash => {
                if self.replay.is_some() {
                    self.stop_recording(format!("the host's world replaced this one before turn {from}"));
                }
                self.recorder.start(from, &loaded);
                self.world = Some(loaded);
                self.held.retain(|t, _| *t >= from);
                self.next = from;
                self.first = from;
                self.hashes.clear();
                self.issued.clear();
                self.events.push(ClientEvent::Loaded { from });
            }
            Ok(_) => self.fail(format!("the host's world before turn {from} has another hash here")),
            Err(e) => self.fail(format!("the host's world before turn {from}: {e}")),
        }
    }

    fn welcome(&mut self, version: u32, seat: u8, scenario: &str, start_hash: Digest, from: u32) {
        if version != PROTOCOL_VERSION || seat != self.seat || self.world.is_some() {
            return self.fail(format!("unexpected welcome: version {version}, seat {seat}"));
        }
        let scenario = Scenario::parse_with(scenario, "host", &mut |f| Err(format!("no file {f} over the network")), &self.rulesets)
            .map_err(|e| e.to_string());
        match scenario.and_then(|s| s.world().map(|w| (s, w)).map_err(|e| e.to_string())) {
            Ok((scenario, mut world)) if world.state_hash() == start_hash => {
                self.recorder.start(from, &world);
                if self.record_every > 0 && from > 0 {
                    self.stop_recording(format!("this client joined at turn {from}, and a replay starts at turn 0"));
                } else if self.record_every > 0 {
                    let header = replay::record::header_for(&scenario, &mut world, self.record_every);
                    match ReplayWriter::new(Vec::new(), header) {
                        Ok(writer) => self.replay = Some(writer),
                        Err(e) => self.stop_recording(e.to_string()),
                    }
                }
                self.world = Some(world);
                self.next = from;
                self.first = from;
                self.events.push(ClientEvent::Welcomed { seat });
            }
            Ok(_) => self.fail("the host's scenario builds another world here".to_owned()),
            Err(e) => self.fail(format!("the host's scenario: {e}")),
        }
    }

    fn ask(&mut self, turn: u32, snapshot: bool) {
        if self.asked.contains(&(turn, snapshot)) {
            return;
        }
        if self.asked.len() >= MAX_ASKED {
            return self.answer_empty(turn, snapshot);
        }
        self.asked.push((turn, snapshot));
    }

    fn answer_empty(&mut self, turn: u32, snapshot: bool) {
        if snapshot {
            chunks(turn, &[]).into_iter().for_each(|c| self.send(ClientMsg::Snapshot(c)));
        } else {
            self.send(ClientMsg::Digests { turn, reports: Vec::new() });
        }
    }

    /// Answers the host's questions: the turn asked about is simulated again from the recorder
    /// (with the brain's hook, as it was stepped), and its digest leaves or snapshot sent; a turn
    /// no longer kept gets an empty answer. When the turn simulated again does not have the hash
    /// this peer had, the peer is not reproducible on its own, and says so in an event.
    fn answer(&mut self, brain: &mut dyn Brain) {
        if self.asked.is_empty() || self.closed {
            return;
        }
        let asked = std::mem::take(&mut self.asked);
        let mut turns: Vec<u32> = asked.iter().map(|a| a.0).collect();
        turns.sort_unstable();
        turns.dedup();
        for turn in turns {
            let replayed = self.world.as_ref().map(|w| self.recorder.replay_to(turn, w, &mut |w, t| brain.before_step(w, t)));
            let replayed = match replayed {
                Some(Ok(r)) => r,
                _ => {
                    asked.iter().filter(|a| a.0 == turn).for_each(|a| self.answer_empty(a.0, a.1));
                    continue;
                }
            };
            if !replayed.reproduced {
                self.events.push(ClientEvent::NotReproduced { turn });
            }
            for &(_, snapshot) in asked.iter().filter(|a| a.0 == turn) {
                if snapshot {
                    let bytes = replayed.world.save();
                    chunks(turn, &bytes).into_iter().for_each(|c| self.send(ClientMsg::Snapshot(c)));
                } else {
                    self.send(ClientMsg::Digests { turn, reports: replayed.world.digest_reports() });
                }
            }
        }
    }

    /// Sends a message as it is, unchecked, under the connection's next sequence number: for tests
    /// and tools that probe a host's defences with what an honest client would never send.
    pub fn send_unchecked(&mut self, msg: ClientMsg) {
        self.send(msg);
    }

    /// Sends the brain's orders, as many `Commands` messages as keep each within its limits: at
    /// most [`MAX_COMMANDS_PER_TURN`] orders and a frame's bytes. An order too large for the host
    /// to take is not sent at all ([`ClientEvent::NotSent`]).
    fn send_orders(&mut self, orders: Vec<Order>, now: u64) {
        // Room for the envelope and the message's own fields beside the orders.
        const BATCH_BYTES: usize = crate::protocol::MAX_FRAME - 4096;
        let mut batch: Vec<Order> = Vec::new();
        let mut bytes = 0;
        for order in orders {
            let size = bincode::serde::encode_to_vec(&order, sim::state_hash::CONFIG).map_or(usize::MAX, |b| b.len());
            if size > crate::orders::MAX_ORDER_BYTES {
                let refusal = Refusal::TooLarge { bytes: size as u64, limit: crate::orders::MAX_ORDER_BYTES as u64 };
                self.events.push(ClientEvent::NotSent { refusal });
                continue;
            }
            if batch.len() == MAX_COMMANDS_PER_TURN || bytes + size > BATCH_BYTES {
                self.send(ClientMsg::Commands { orders: std::mem::take(&mut batch) });
                bytes = 0;
            }
            if self.issued.len() < MAX_ISSUED {
                self.issued.push_back(now);
            }
            bytes += size;
            batch.push(order);
        }
        if !batch.is_empty() {
            self.send(ClientMsg::Commands { orders: batch });
        }
    }

    /// Steps every turn whose command set is held, in order: after each, reports the hash and
    /// sends the brain's commands.
    pub fn step_ready(&mut self, now: u64, brain: &mut dyn Brain) {
        self.answer(brain);
        // While the host's world is on its way, the turns after it wait.
        while !self.closed
            && self.loading.is_none()
            && let Some(commands) = self.held.remove(&self.next)
        {
            let Some(world) = self.world.as_mut() else {
                return self.fail("a turn before the welcome".to_owned());
            };
            brain.before_step(world, self.next);
            if let Some(w) = self.replay.as_mut().filter(|w| w.keyframe_due(world)) {
                // Writing into memory cannot fail.
                let _ = w.keyframe(world);
            }
            let report = world.step(&commands);
            if let Some(w) = self.replay.as_mut() {
                let _ = w.turn(&commands, &report);
            }
            self.recorder.record(self.next, &commands, report.hash, world);
            // The host applies this seat's orders in the order they were sent, so the oldest
            // sent are the ones this turn applies.
            let player = PlayerId(self.seat);
            for _ in commands.iter().filter(|c| c.player == player && c.seq >= CLIENT_SEQ_BASE) {
                if let Some(sent) = self.issued.pop_front() {
                    self.latency.record(now.saturating_sub(sent));
                }
            }
            // An observer's brain sees every turn too (a progress count reads them), but what it
            // would order is not sent: an observer plays no player.
            let thought = if self.ended.is_some() { Vec::new() } else { brain.think(world, &report) };
            let orders = if self.seat == OBSERVER_SEAT { Vec::new() } else { thought };
            self.hashes.push(report.hash);
            self.last_step_ms = now;
            let reported = brain.hash_to_report(self.next, report.hash);
            self.send(ClientMsg::Hash { turn: self.next, hash: reported });
            self.send_orders(orders, now);
            self.next += 1;
        }
    }
}
