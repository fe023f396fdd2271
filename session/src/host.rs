//! The host's state machine: seats, the turn clock, command stamping and relay, the adaptive input
//! delay, hash comparison and dropping a peer that lags.
//!
//! [`HostCore`] does no I/O and reads no clock: the caller feeds it connections, frames and the
//! time in milliseconds (`now`), and takes back the frames to send, the connections to close and
//! the events to log ([`HostCore::take_output`]). It runs the game's world itself, as a dedicated
//! server, so it has a hash of its own for every turn, the game's replay and a snapshot to give.

use crate::Error;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use replay::format::ReplayWriter;
use replay::rules::Rulesets;
use replay::scenario::{Scenario, ScriptRunner};
use sim::digest_tree::Digest;

use crate::recorder::Recorder;
use crate::stats::Traffic;
use sim::{Command, PlayerId, World};

pub(crate) mod desync;

use crate::orders::{Refusal, SeatTurn, check_order, check_player};
use crate::protocol::{
    Chunk, ClientMsg, HostMsg, Link, MAX_COMMANDS_PER_TURN, OBSERVER_SEAT, Order, PROTOCOL_VERSION, Reassembly, Token, Waiting, chunks,
};

/// A connection, as the transport numbers it.
pub type ConnId = u32;

/// The smallest input delay, in turns.
pub const MIN_DELAY: u32 = 1;
/// The largest input delay, in turns.
pub const MAX_DELAY: u32 = 10;
/// Turns in a row the measured delay must be lower before the delay comes down by one.
pub const LOWER_AFTER: u32 = 8;
/// The most frames a connection may send within one turn's time; more is a flood and closes it.
pub const MAX_FRAMES_PER_TURN: u32 = 256;
/// The first `seq` of the commands the host stamps for a player, clear of the scenario script's
/// (which count from 0) and of its bots' (from `BOT_SEQ_BASE`, 2³⁰).
pub const CLIENT_SEQ_BASE: u32 = 1 << 29;
/// A connection that has not claimed a seat this long after the host first saw it is closed, so
/// silent connections cannot hold the transport's connection slots. `[Units: milliseconds]`
pub const HELLO_WITHIN_MS: u64 = 5_000;
/// The most observers a host serves at once; one more is closed.
pub const MAX_OBSERVERS: usize = 8;
/// The most turns an observer's hashes may trail the turns closed; an observer further behind is
/// closed rather than waited for.
pub const MAX_OBSERVER_LAG: u32 = 256;
/// The most bytes an observer may send within one turn's time, besides its hashes: it has
/// nothing else to say, so more is a flood and closes it. `[Units: bytes]`
pub const MAX_OBSERVER_BYTES_PER_TURN: usize = 64 * 1024;
/// The most bytes any other connection may send within one turn's time, besides the hashes,
/// acknowledgements and snapshot chunks the host asked for: two frames of the limit, more than
/// a seat's share of a turn's orders. `[Units: bytes]`
pub const MAX_BYTES_PER_TURN: usize = 2 * crate::protocol::MAX_FRAME;
/// While the game waits (the lobby, a seat the game holds its turns for, a desync being located),
/// every connection is told what it waits for this often, which also tells a client that the
/// host is alive when no turn closes. `[Units: milliseconds]`
pub const STATUS_EVERY_MS: u64 = 1_000;
/// The most snapshot chunks sent to a connection and not yet acknowledged (`Got`).
pub const CHUNK_WINDOW: u32 = 4;

/// How the input delay is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delay {
    /// Always this many turns (clamped to [`MIN_DELAY`]..=[`MAX_DELAY`]).
    Fixed(u32),
    /// From the measured round-trip times: see [`target_delay`].
    Auto,
}

/// What a host needs besides the scenario.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// One token per seat, seat 1 first; the number of seats is the number of tokens.
    pub tokens: Vec<Token>,
    /// Turns to play.
    pub turns: u32,
    /// Milliseconds per turn.
    pub turn_ms: u32,
    /// The input delay.
    pub delay: Delay,
    /// A peer whose hash for a closed turn is missing for longer than this is dropped.
    pub drop_after_ms: u64,
    /// How many turns the host closes ahead of the slowest peer's last hash before it waits.
    pub max_lead: u32,
    /// A keyframe every this many turns in the host's replay; 0 for no replay.
    pub keyframe_every: u32,
}

/// Something the host did or refused, for its log: one line each ([`fmt::Display`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// The game waits: for players, a late seat or a desync's answers (logged when it changes).
    Waiting(Waiting),
    /// A connection took a seat.
    Joined {
        /// The connection.
        conn: ConnId,
        /// The seat.
        seat: u8,
    },
    /// Every seat is taken: turn 0 is under way.
    Started {
        /// The input delay at the start.
        delay: u32,
    },
    /// A connection was closed by the host, and why.
    Closed {
        /// The connection.
        conn: ConnId,
        /// Why.
        reason: String,
    },
    /// A seat's connection went away; its units stay, idle.
    Left {
        /// The seat.
        seat: u8,
    },
    /// A seat that had left is played again by a connection, from the host's world before `from`.
    Rejoined {
        /// The connection.
        conn: ConnId,
        /// The seat.
        seat: u8,
        /// The first turn the connection steps.
        from: u32,
    },
    /// A connection watches the game, from the host's world before `from` (0 in the lobby).
    Observing {
        /// The connection.
        conn: ConnId,
        /// The first turn it steps.
        from: u32,
    },
    /// After a desync, these seats were sent the host's world before `from` and play on from it.
    Resynced {
        /// The seats.
        seats: Vec<u8>,
        /// The first turn they step on the host's world.
        from: u32,
    },
    /// A seat's hash differed from the host's while its world equals the host's: it reported a
    /// false hash, and was dropped (its units stay, idle); the others play on.
    FalseHash {
        /// The seat.
        seat: u8,
        /// The turn of the false hash.
        turn: u32,
    },
    /// A seat's hash differed from the host's and it sent no snapshot of the turn within the
    /// snapshot timeout, so it would not prove its world: it was dropped as the peer that
    /// disagrees (its units stay, idle); the others play on.
    Unproven {
        /// The seat.
        seat: u8,
        /// The turn of the differing hash.
        turn: u32,
        /// How long the host waited for its snapshot. `[Units: milliseconds]`
        waited_ms: u64,
    },
    /// A seat lagged too long and was dropped; its units stay, idle.
    Dropped {
        /// The seat.
        seat: u8,
        /// The first turn it had not stepped.
        behind_at: u32,
    },
    /// A command was refused and never applied; its sender was told.
    Refused {
        /// The seat that sent it.
        seat: u8,
        /// The player it named.
        player: PlayerId,
        /// Why.
        refusal: Refusal,
    },
    /// The input delay changed from this turn on.
    DelayChanged {
        /// The first turn with the new delay.
        turn: u32,
        /// The new delay, in turns.
        delay: u32,
    },
    /// The peers' hashes differed after a turn.
    Desync {
        /// The turn.
        turn: u32,
        /// The seats whose hash differed from the majority's (0 for the host's own world).
        seats: Vec<u8>,
    },
    /// The replay's stream failed and stopped (the replay is still kept in memory).
    NotRecording {
        /// The writer's error.
        reason: String,
    },
    /// Every seat has left and none came back within the drop time: the game ends here.
    Deserted {
        /// The turns closed.
        turns: u32,
    },
    /// The game is over.
    Ended {
        /// Turns played.
        turns: u32,
        /// The host's hash after the last turn.
        final_hash: Digest,
        /// Whether every compared hash agreed.
        in_sync: bool,
    },
}

impl fmt::Display for HostEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Waiting(waiting) => write!(f, "{waiting}"),
            Self::Joined { conn, seat } => write!(f, "joined: connection {conn} plays seat {seat}"),
            Self::Started { delay } => write!(f, "started: every seat taken, input delay {delay} turns"),
            Self::Closed { conn, reason } => write!(f, "closed connection {conn}: {reason}"),
            Self::Left { seat } => write!(f, "left: seat {seat} disconnected, its units stay idle"),
            Self::Rejoined { conn, seat, from } => write!(f, "rejoined: connection {conn} plays seat {seat} again from turn {from}"),
            Self::Observing { conn, from } => write!(f, "observer: connection {conn} watches from turn {from}"),
            Self::Resynced { seats, from } => write!(f, "resynced: seats {seats:?} load the host's world and play on from turn {from}"),
            Self::FalseHash { seat, turn } => {
                write!(f, "dropped: seat {seat} reported a false hash after turn {turn} (its world equals the host's), its units stay idle")
            }
            Self::Unproven { seat, turn, waited_ms } => write!(
                f,
                "dropped: seat {seat}'s hash after turn {turn} differs from the host's and it sent no snapshot within {}.{} s to show its world, its units stay idle",
                waited_ms / 1000,
                waited_ms % 1000 / 100
            ),
            Self::Dropped { seat, behind_at } => {
                write!(f, "dropped: seat {seat} had not stepped turn {behind_at} in time, its units stay idle")
            }
            Self::Refused { seat, player, refusal } => write!(f, "refused a command of seat {seat} for player {}: {refusal}", player.0),
            Self::DelayChanged { turn, delay } => write!(f, "delay changed: {delay} turns from turn {turn}"),
            Self::Desync { turn, seats } => write!(f, "desync after turn {turn}: seats {seats:?} differ from the majority (0 is the host)"),
            Self::NotRecording { reason } => write!(f, "not recording: the replay's file: {reason}"),
            Self::Deserted { turns } => write!(f, "deserted: every seat left, the game ends after {turns} turns"),
            Self::Ended { turns, final_hash, in_sync } => {
                write!(f, "ended after {turns} turns, final hash {}, {}", hex(final_hash), if *in_sync { "in sync" } else { "DESYNC" })
            }
        }
    }
}

/// Lower-case hexadecimal of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the host wants done after a call: frames to send, connections to close, events to log.
#[derive(Debug, Default)]
pub struct HostOutput {
    /// Frame payloads to send, in order, per connection.
    pub frames: Vec<(ConnId, Vec<u8>)>,
    /// Connections to close after sending their frames.
    pub close: Vec<ConnId>,
    /// What happened.
    pub events: Vec<HostEvent>,
}

/// The input delay that covers the worst seat's round trip plus four deviations, in whole turns,
/// plus one turn, clamped to [`MIN_DELAY`]..=[`MAX_DELAY`]. `rtts` holds each seat's smoothed
/// round-trip time and deviation in milliseconds.
pub fn target_delay(rtts: impl Iterator<Item = (u64, u64)>, turn_ms: u32) -> u32 {
    let worst = rtts.map(|(srtt, var)| srtt + 4 * var).max().unwrap_or(0);
    let turns = worst.div_ceil(u64::from(turn_ms.max(1)));
    u32::try_from(turns.saturating_add(1)).unwrap_or(MAX_DELAY).clamp(MIN_DELAY, MAX_DELAY)
}

/// Where the host's replay goes: kept in memory (for the desync report and
/// [`HostCore::replay_bytes`]) and, once [`HostCore::stream_replay`] gave one, written to a sink
/// as it is made. A sink that fails is dropped, and why kept for an event.
#[derive(Default)]
struct Tee {
    kept: Vec<u8>,
    sink: Option<Box<dyn std::io::Write>>,
    failed: Option<String>,
}

impl std::io::Write for Tee {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.kept.extend_from_slice(bytes);
        if let Some(sink) = self.sink.as_mut()
            && let Err(e) = sink.write_all(bytes)
        {
            self.failed = Some(e.to_string());
            self.sink = None;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(sink) = self.sink.as_mut()
            && let Err(e) = sink.flush()
        {
            self.failed = Some(e.to_string());
            self.sink = None;
        }
        Ok(())
    }
}

/// A seat's state.
#[derive(Debug, Default)]
struct Seat {
    conn: Option<ConnId>,
    /// Left or dropped: never waited for again, its hashes no longer compared.
    gone: bool,
    /// Turns it reported a hash for (it stepped turns `from..hashed`).
    hashed: u32,
    /// The first turn its connection stepped: 0, or the turn of the host's world it was sent on a
    /// rejoin or a resync. Its hashes of earlier turns are not compared (nor asked for).
    from: u32,
    /// Its hashes not yet compared, by turn.
    hashes: BTreeMap<u32, Digest>,
    /// Smoothed round-trip time and its mean deviation (ms), once measured.
    rtt: Option<(u64, u64)>,
    /// Pings sent and not answered: id → sent at.
    pings: BTreeMap<u32, u64>,
    /// Sent the host's world after a desync once already: diverging again drops it.
    resynced: bool,
}

/// A connection's state.
#[derive(Debug, Default)]
struct Conn {
    link: Link<ClientMsg>,
    seat: Option<u8>,
    /// The time of the first tick that saw the connection.
    seen_at: Option<u64>,
    /// Frames received since the last turn boundary.
    frames: u32,
    /// Orders received, in all: the number the next one is refused by.
    orders: u32,
    /// Bytes of frames received since the last turn boundary, less the answers the host asked for.
    bytes: usize,
    /// The size of the frame being read.
    last_size: usize,
    /// Snapshot chunks waiting for the window, and how many were sent and not yet acknowledged.
    outgoing: VecDeque<Chunk>,
    in_flight: u32,
    /// The snapshot the connection is sending, in pieces.
    incoming: Reassembly,
}

/// An observer's progress.
#[derive(Debug)]
struct Watcher {
    /// It steps turns from `from` and reported hashes for `from..hashed`.
    hashed: u32,
}

/// Where the game is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for every seat.
    Lobby,
    /// Turns are closing.
    Running,
    /// A hash mismatch stopped the game; answers are being gathered.
    Locating,
    /// The game is over.
    Over,
}

/// The host, for a scenario it borrows.
pub struct HostCore<'s> {
    config: HostConfig,
    scenario_text: String,
    start_hash: Digest,
    world: World,
    /// The scenario's own commands (its script and bots), which the host adds to each turn.
    script: ScriptRunner<'s>,
    replay: Option<ReplayWriter<Tee>>,
    replay_done: Option<Vec<u8>>,
    phase: Phase,
    conns: BTreeMap<ConnId, Conn>,
    seats: Vec<Seat>,
    /// The host's turn: commands received now apply on `current + delay`.
    current: u32,
    delay: u32,
    /// Turns in a row the target delay was below `delay`.
    lower_streak: u32,
    /// Turns `0..closed` are closed: sent and stepped by the host.
    closed: u32,
    /// When each turn was closed (ms).
    closed_at: Vec<u64>,
    next_boundary: u64,
    next_ping: u32,
    /// Commands stamped for turns not yet closed.
    pending: BTreeMap<u32, Vec<Command>>,
    /// What each seat's stamped orders use of the budgets of the turns not yet closed (seat 1 first).
    budgets: BTreeMap<u32, Vec<SeatTurn>>,
    /// Every closed turn's commands: the game's command stream.
    history: Vec<Vec<Command>>,
    /// The host's hash after every closed turn.
    hashes: Vec<Digest>,
    /// The host's leaves and snapshots of the turns not yet agreed.
    recorder: Recorder,
    /// The bytes sent to and received from every connection.
    traffic: Traffic,
    /// Turns `0..compared` had equal hashes on every peer still playing.
    compared: u32,
    in_sync: bool,
    /// `in_sync` before the desync being located, restored when it was only false reports.
    in_sync_before: bool,
    locating: Option<desync::Locating>,
    report: Option<desync::DesyncReport>,
    /// Observers by connection.
    observers: BTreeMap<ConnId, Watcher>,
    /// Whether a desync is followed by a resync rather than the game's end.
    resync: bool,
    /// The scenario's game rules, by which a desync report names the game's fields.
    rulesets: Rulesets,
    /// Since when no seat has been playing (ms), while the game runs.
    deserted_since: Option<u64>,
    /// The game ended because every seat left.
    deserted: bool,
    /// What the game waits for, and when the peers were last told.
    waiting: Option<(Waiting, u64)>,
    out: HostOutput,
}

impl<'s> HostCore<'s> {
    /// A host for a game of `scenario`.
    ///
    /// # Errors
    /// When the scenario's world cannot be built, the configuration has no seat or more seats than
    /// the scenario's players, or the replay cannot be started.
    pub fn new(scenario: &'s Scenario, config: HostConfig) -> Result<Self, Error> {
        let mut world = scenario.world()?;
        let mut recorder = Recorder::default();
        recorder.start(0, &world);
        let players = world.settings().players;
        if config.tokens.is_empty() || config.tokens.len() > usize::from(players) {
            return Err(Error::Seats { seats: config.tokens.len(), players });
        }
        let replay = if config.keyframe_every > 0 {
            let header = replay::record::header_for(scenario, &mut world, config.keyframe_every);
            Some(ReplayWriter::new(Tee::default(), header)?)
        } else {
            None
        };
        let delay = match config.delay {
            Delay::Fixed(d) => d.clamp(MIN_DELAY, MAX_DELAY),
            Delay::Auto => MIN_DELAY + 1,
        };
        let seats = config.tokens.iter().map(|_| Seat::default()).collect();
        let seats_count = u8::try_from(config.tokens.len()).unwrap_or(u8::MAX);
        Ok(Self {
            scenario_text: scenario.canonical_text().to_owned(),
            start_hash: world.state_hash(),
            world,
            // The seats' players are played over the network, not by the scenario's own bots.
            script: scenario.script().without_bots_for(|p| (1..=seats_count).contains(&p.0)),
            replay,
            replay_done: None,
            phase: Phase::Lobby,
            conns: BTreeMap::new(),
            seats,
            current: 0,
            delay,
            lower_streak: 0,
            closed: 0,
            closed_at: Vec::new(),
            next_boundary: 0,
            next_ping: 0,
            pending: BTreeMap::new(),
            budgets: BTreeMap::new(),
            history: Vec::new(),
            hashes: Vec::new(),
            recorder,
            traffic: Traffic::default(),
            compared: 0,
            in_sync: true,
            in_sync_before: true,
            locating: None,
            report: None,
            observers: BTreeMap::new(),
            resync: false,
            rulesets: scenario.rules().map_or_else(Rulesets::none, |r| Rulesets::none().with_shared(r.clone())),
            deserted_since: None,
            deserted: false,
            waiting: None,
            config,
            out: HostOutput::default(),
        })
    }

    /// With `on`, a desync no longer ends the game: once it is located and its report kept, the
    /// seats whose hash differed from the host's load the host's world and play on (`--resync`).
    pub fn set_resync(&mut self, on: bool) {
        self.resync = on;
    }

    /// The frames, closes and events produced since the last call.
    pub fn take_output(&mut self) -> HostOutput {
        std::mem::take(&mut self.out)
    }

    /// The bytes sent to and received from every connection, in all.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// Whether the game is over (the `End` message is sent).
    pub fn is_over(&self) -> bool {
        self.phase == Phase::Over
    }

    /// Whether the game ended because every seat had left ([`HostEvent::Deserted`]).
    pub fn deserted(&self) -> bool {
        self.deserted
    }

    /// Whether every compared hash agreed so far.
    pub fn in_sync(&self) -> bool {
        self.in_sync
    }

    /// Every closed turn's commands, in order: what a single-process run steps to check the game.
    pub fn history(&self) -> &[Vec<Command>] {
        &self.history
    }

    /// The host's hash after every closed turn.
    pub fn hashes(&self) -> &[Digest] {
        &self.hashes
    }

    /// What the game waits for now, with its latest figures (a late seat's lag grows while it
    /// lasts); `None` while turns close. The log has an event only when what it waits for
    /// changes; this is for a caller that reports the figures as they grow (`host --json`).
    pub fn waiting(&self) -> Option<&Waiting> {
        self.waiting.as_ref().map(|(status, _)| status)
    }

    /// The turns closed so far (sent and stepped by the host).
    pub fn turns_closed(&self) -> u32 {
        self.closed
    }

    /// The turns the game is to last.
    pub fn turns(&self) -> u32 {
        self.config.turns
    }

    /// The input delay now in force.
    pub fn delay(&self) -> u32 {
        self.delay
    }

    /// The host's world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The desync report, once a mismatch has been located.
    pub fn report(&self) -> Option<&desync::DesyncReport> {
        self.report.as_ref()
    }

    /// Streams the replay to `sink` as well as keeping it: the bytes so far at once, then each
    /// record as the host closes a turn, flushed before the next, so a host killed mid-game
    /// leaves a replay that reads to its last whole turn (as `phalanx run --record` does). A
    /// write that fails stops the stream with a [`HostEvent::NotRecording`]; the game goes on.
    ///
    /// # Errors
    /// The sink's error on the bytes so far; `InvalidInput` when the host records no replay.
    pub fn stream_replay(&mut self, mut sink: Box<dyn std::io::Write>) -> std::io::Result<()> {
        let Some(w) = self.replay.as_mut() else {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "this host records no replay (keyframe_every 0)"));
        };
        let tee = w.get_mut();
        sink.write_all(&tee.kept)?;
        sink.flush()?;
        tee.sink = Some(sink);
        Ok(())
    }

    /// Ends a stream, reporting a failed write; returns the bytes kept.
    fn stop_streaming(&mut self, mut tee: Tee) -> Vec<u8> {
        if let Some(mut sink) = tee.sink.take() {
            let _ = sink.flush();
        }
        self.report_stream_failure(&mut tee);
        tee.kept
    }

    fn report_stream_failure(&mut self, tee: &mut Tee) {
        if let Some(reason) = tee.failed.take() {
            self.out.events.push(HostEvent::NotRecording { reason });
        }
    }

    /// The host's replay, once the game is over (finished with a keyframe of the last state).
    pub fn replay_bytes(&self) -> Option<&[u8]> {
        self.replay_done.as_deref()
    }

    /// A new connection; it must send `Hello` first.
    pub fn on_connect(&mut self, conn: ConnId) {
        self.conns.insert(conn, Conn::default());
    }

    /// Makes room for a new connection when the transport is full: closes the oldest connection
    /// that has sent no `Hello` (never one that plays a seat or observes), and returns it for the
    /// transport to drop; `None` when every connection has identified itself. So silent
    /// connections cannot keep a player, a rejoining seat or an observer out for as long as an
    /// attacker likes: each new connection displaces the oldest silent one.
    pub fn make_room(&mut self) -> Option<ConnId> {
        let oldest = self.conns.iter().find(|(_, c)| c.seat.is_none()).map(|(&conn, _)| conn)?;
        self.close(oldest, "displaced: the host is full and this connection had sent no Hello".to_owned());
        Some(oldest)
    }

    /// The transport lost a connection (the host's own closes need no call).
    pub fn on_disconnect(&mut self, conn: ConnId, now: u64) {
        self.observers.remove(&conn);
        if let Some(c) = self.conns.remove(&conn)
            && let Some(seat) = c.seat.filter(|s| *s != OBSERVER_SEAT)
        {
            self.leave_seat(seat);
            self.compare(now);
        }
    }

    /// A frame from a connection.
    pub fn on_frame(&mut self, conn: ConnId, bytes: &[u8], now: u64) {
        let Some(c) = self.conns.get_mut(&conn) else { return };
        self.traffic.received(bytes.len());
        c.frames += 1;
        c.bytes += bytes.len();
        if c.frames > MAX_FRAMES_PER_TURN {
            self.close(conn, format!("flood: more than {MAX_FRAMES_PER_TURN} frames in one turn"));
            return;
        }
        let limit = if c.seat == Some(OBSERVER_SEAT) { MAX_OBSERVER_BYTES_PER_TURN } else { MAX_BYTES_PER_TURN };
        if c.bytes > limit {
            self.close(conn, format!("flood: more than {limit} bytes in one turn"));
            return;
        }
        let size = bytes.len();
        let msgs = match c.link.accept(bytes) {
            Ok(msgs) => msgs,
            Err(e) => {
                self.close(conn, e.to_string());
                return;
            }
        };
        // The frame's bytes are refunded with its count when it answers the host (a frame that
        // filled a gap refunds only its own size, a bound that errs on the strict side).
        if let Some(c) = self.conns.get_mut(&conn) {
            c.last_size = size;
        }
        for msg in msgs {
            if !self.conns.contains_key(&conn) {
                return;
            }
            self.on_message(conn, msg, now);
        }
    }

    /// Takes back the flood count of an accepted hash or acknowledgement: each answers a turn or a
    /// chunk the host sent, at most once, so a peer catching up many turns at once is no flood.
    fn refund(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.frames = c.frames.saturating_sub(1);
            c.bytes = c.bytes.saturating_sub(c.last_size);
        }
    }

    fn on_message(&mut self, conn: ConnId, msg: ClientMsg, now: u64) {
        let seat = self.conns.get(&conn).and_then(|c| c.seat);
        match (msg, seat) {
            (ClientMsg::Hello { version, seat: asked, token }, None) => self.hello(conn, version, asked, &token, now),
            (ClientMsg::Hello { .. }, Some(_)) => self.close(conn, "a second Hello".to_owned()),
            (_, None) => self.close(conn, "a message before Hello".to_owned()),
            (ClientMsg::Got { .. }, Some(_)) => self.got(conn),
            (msg, Some(OBSERVER_SEAT)) => self.observer_message(conn, msg),
            (ClientMsg::Commands { orders }, Some(seat)) => self.commands(conn, seat, orders),
            (ClientMsg::Hash { turn, hash }, Some(seat)) => self.hash(conn, seat, turn, hash, now),
            (ClientMsg::Pong { id }, Some(seat)) => {
                let s = &mut self.seats[usize::from(seat - 1)];
                if let Some(sent) = s.pings.remove(&id) {
                    let sample = now.saturating_sub(sent);
                    // The smoothing of TCP's retransmission timer (RFC 6298), in whole milliseconds.
                    s.rtt = Some(match s.rtt {
                        None => (sample, sample / 2),
                        Some((srtt, var)) => ((7 * srtt + sample) / 8, (3 * var + srtt.abs_diff(sample)) / 4),
                    });
                }
            }
            (ClientMsg::Digests { turn, reports }, Some(seat)) => self.on_digests(seat, turn, reports),
            (ClientMsg::Snapshot(chunk), Some(seat)) => {
                // Only an answer to the question of a desync being located is put together, so a
                // peer cannot hold the host's memory with snapshots nobody asked for.
                if self.locating.is_none() {
                    return;
                }
                self.refund(conn);
                let Some(c) = self.conns.get_mut(&conn) else { return };
                match c.incoming.accept(chunk) {
                    Ok(Some((turn, bytes))) => self.on_snapshot(seat, turn, bytes),
                    Ok(None) => {}
                    Err(reason) => self.close(conn, reason.to_string()),
                }
            }
        }
    }

    /// An observer's message: hashes are checked against the host's, commands refused.
    fn observer_message(&mut self, conn: ConnId, msg: ClientMsg) {
        match msg {
            ClientMsg::Commands { orders } => {
                // One refusal for the message (its first order), so an observer cannot make the
                // host write more than it was sent.
                let first = self.next_order(conn);
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.orders = c.orders.saturating_add(u32::try_from(orders.len()).unwrap_or(u32::MAX).saturating_sub(1));
                }
                if let Some(order) = orders.first() {
                    self.refuse(conn, first, OBSERVER_SEAT, order.player, Refusal::Observer);
                }
            }
            ClientMsg::Hash { turn, hash } => {
                let Some(w) = self.observers.get_mut(&conn) else { return };
                if turn != w.hashed || turn >= self.closed {
                    let expected = w.hashed;
                    return self.close(conn, format!("hash for turn {turn}, expected turn {expected} of {} closed", self.closed));
                }
                w.hashed += 1;
                self.refund(conn);
                if self.hashes[turn as usize] != hash {
                    // An observer has no vote: its world is wrong, and it is told so by being closed.
                    self.close(conn, format!("the observer's hash after turn {turn} differs from the host's"));
                }
            }
            // Observers are not pinged nor asked about a desync; an answer anyway changes nothing.
            _ => {}
        }
    }

    /// A chunk was acknowledged: the window moves on.
    fn got(&mut self, conn: ConnId) {
        let Some(c) = self.conns.get_mut(&conn) else { return };
        if c.in_flight == 0 {
            return self.close(conn, "an acknowledgement of no snapshot chunk".to_owned());
        }
        c.in_flight -= 1;
        self.refund(conn);
        self.pump(conn);
    }

    /// Sends queued chunks while fewer than [`CHUNK_WINDOW`] wait for their acknowledgement.
    fn pump(&mut self, conn: ConnId) {
        while let Some(c) = self.conns.get_mut(&conn)
            && c.in_flight < CHUNK_WINDOW
            && let Some(chunk) = c.outgoing.pop_front()
        {
            c.in_flight += 1;
            self.send(conn, &HostMsg::Snapshot(chunk));
        }
    }

    /// Sends a connection the host's world as it is now (before turn `closed`), to step on from.
    fn send_world(&mut self, conn: ConnId, bytes: &[u8]) {
        let from = self.closed;
        let hash = self.hashes.last().copied().unwrap_or(self.start_hash);
        self.send(conn, &HostMsg::Load { from, hash });
        if let Some(c) = self.conns.get_mut(&conn) {
            c.outgoing.extend(chunks(from, bytes));
        }
        self.pump(conn);
    }

    fn hello(&mut self, conn: ConnId, version: u32, asked: u8, token: &Token, now: u64) {
        if version != PROTOCOL_VERSION {
            return self.close(conn, format!("protocol version {version}, this host speaks {PROTOCOL_VERSION}"));
        }
        if asked == OBSERVER_SEAT {
            return self.observe(conn);
        }
        let Some(expected) = usize::from(asked).checked_sub(1).and_then(|k| self.config.tokens.get(k)) else {
            return self.close(conn, format!("no seat {asked}"));
        };
        // Compared without an early exit, so the time taken does not tell how much was right.
        if expected.iter().zip(token).fold(0, |acc, (a, b)| acc | (a ^ b)) != 0 {
            return self.close(conn, format!("wrong token for seat {asked}"));
        }
        match self.phase {
            Phase::Lobby if self.seats[usize::from(asked - 1)].conn.is_none() => {}
            Phase::Lobby => return self.close(conn, format!("seat {asked} is taken")),
            Phase::Running => return self.rejoin(conn, asked),
            Phase::Locating | Phase::Over => return self.close(conn, format!("seat {asked}: the game is stopped or over")),
        }
        self.seats[usize::from(asked - 1)].conn = Some(conn);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.seat = Some(asked);
        }
        self.welcome(conn, asked);
        self.out.events.push(HostEvent::Joined { conn, seat: asked });
        if self.seats.iter().all(|s| s.conn.is_some()) {
            self.start(now);
        }
    }

    fn welcome(&mut self, conn: ConnId, seat: u8) {
        let from = if self.phase == Phase::Lobby { 0 } else { self.closed };
        let scenario = self.scenario_text.clone();
        self.send(conn, &HostMsg::Welcome { version: PROTOCOL_VERSION, seat, scenario, start_hash: self.start_hash, from });
    }

    /// A seat's token during the game: its connection, if it still has one, is replaced (the
    /// player's own new connection wins over a half-open old one), and the seat plays on from the
    /// host's world as it is now.
    fn rejoin(&mut self, conn: ConnId, seat: u8) {
        if let Some(old) = self.seats[usize::from(seat - 1)].conn {
            self.close(old, format!("seat {seat} was claimed again by connection {conn}"));
        }
        let from = self.closed;
        let s = &mut self.seats[usize::from(seat - 1)];
        s.conn = Some(conn);
        s.gone = false;
        s.from = from;
        s.hashed = from;
        s.hashes.clear();
        s.pings.clear();
        if let Some(c) = self.conns.get_mut(&conn) {
            c.seat = Some(seat);
        }
        self.welcome(conn, seat);
        let bytes = self.world.save();
        self.send_world(conn, &bytes);
        self.out.events.push(HostEvent::Rejoined { conn, seat, from });
        self.broadcast(&HostMsg::Rejoined { seat });
    }

    /// An observer: it gets every turn, never waited for; late, it starts from the host's world.
    fn observe(&mut self, conn: ConnId) {
        if matches!(self.phase, Phase::Locating | Phase::Over) {
            return self.close(conn, "an observer: the game is stopped or over".to_owned());
        }
        if self.observers.len() >= MAX_OBSERVERS {
            return self.close(conn, format!("over the limit of {MAX_OBSERVERS} observers"));
        }
        let from = if self.phase == Phase::Lobby { 0 } else { self.closed };
        self.observers.insert(conn, Watcher { hashed: from });
        if let Some(c) = self.conns.get_mut(&conn) {
            c.seat = Some(OBSERVER_SEAT);
        }
        self.welcome(conn, OBSERVER_SEAT);
        if from > 0 {
            let bytes = self.world.save();
            self.send_world(conn, &bytes);
        }
        self.out.events.push(HostEvent::Observing { conn, from });
    }

    fn start(&mut self, now: u64) {
        self.phase = Phase::Running;
        self.out.events.push(HostEvent::Started { delay: self.delay });
        self.next_boundary = now + u64::from(self.config.turn_ms);
        self.ping_all(now);
        // Turns before the first stamp can land on hold no command.
        self.close_through(self.delay, now);
    }

    fn commands(&mut self, conn: ConnId, seat: u8, orders: Vec<Order>) {
        if orders.len() > MAX_COMMANDS_PER_TURN {
            return self.close(conn, format!("{} commands in one message, the limit is {MAX_COMMANDS_PER_TURN}", orders.len()));
        }
        let player = PlayerId(seat);
        let turn = self.current + self.delay;
        let seats = self.seats.len();
        for order in orders {
            let number = self.next_order(conn);
            if self.phase != Phase::Running || turn >= self.config.turns {
                // The game is over (or stopping) before the command could apply.
                continue;
            }
            // Each order is bounded on its own and within its seat's share of the turn, so the
            // turn's `Turn` message fits in a frame whatever the seats send.
            let checked = check_player(seat, order.player).and_then(|()| check_order(&order.kind)).and_then(|work| {
                let budget = self.budgets.entry(turn).or_insert_with(|| vec![SeatTurn::default(); seats]);
                budget[usize::from(seat - 1)].take(work, turn, seats)
            });
            if let Err(refusal) = checked {
                self.refuse(conn, number, seat, order.player, refusal);
                continue;
            }
            let list = self.pending.entry(turn).or_default();
            let seq = list.iter().filter(|c| c.player == player).count();
            list.push(Command { turn, player, seq: CLIENT_SEQ_BASE + seq as u32, kind: order.kind });
        }
    }

    /// The number of a connection's next order, counted from 0.
    fn next_order(&mut self, conn: ConnId) -> u32 {
        self.conns.get_mut(&conn).map_or(0, |c| {
            c.orders = c.orders.saturating_add(1);
            c.orders - 1
        })
    }

    /// Refuses an order: the event for the log, and the sender is told which and why.
    fn refuse(&mut self, conn: ConnId, order: u32, seat: u8, player: PlayerId, refusal: Refusal) {
        self.out.events.push(HostEvent::Refused { seat, player, refusal: refusal.clone() });
        self.send(conn, &HostMsg::Refused { order, refusal });
    }

    fn hash(&mut self, conn: ConnId, seat: u8, turn: u32, hash: Digest, now: u64) {
        let (expected, closed, from) = {
            let s = &self.seats[usize::from(seat - 1)];
            (s.hashed, self.closed, s.from)
        };
        if turn < from {
            // Sent before a resync reached the peer: a hash of the world the host has replaced.
            return;
        }
        if turn != expected || turn >= closed {
            return self.close(conn, format!("hash for turn {turn}, expected turn {expected} of {closed} closed"));
        }
        self.refund(conn);
        let s = &mut self.seats[usize::from(seat - 1)];
        s.hashed += 1;
        if !s.gone && turn >= self.compared {
            s.hashes.insert(turn, hash);
        }
        self.compare(now);
    }

    /// Compares every turn all remaining peers have reported, in order.
    fn compare(&mut self, now: u64) {
        while self.phase == Phase::Running && self.compared < self.closed {
            let t = self.compared;
            let mut votes: Vec<(u8, Digest)> = vec![(0, self.hashes[t as usize])];
            for (k, s) in self.seats.iter().enumerate().filter(|(_, s)| !s.gone && s.from <= t) {
                match s.hashes.get(&t) {
                    Some(h) => votes.push((k as u8 + 1, *h)),
                    None => return,
                }
            }
            if votes.iter().all(|(_, h)| *h == votes[0].1) {
                self.compared += 1;
                for s in &mut self.seats {
                    s.hashes.remove(&t);
                }
                continue;
            }
            self.in_sync_before = self.in_sync;
            self.in_sync = false;
            // The majority's hash is the reference; a tie goes to the side the host is on.
            let count = |h: &Digest| votes.iter().filter(|(_, v)| v == h).count();
            let reference = votes.iter().map(|(_, h)| *h).max_by_key(|h| (count(h), *h == votes[0].1)).unwrap_or(votes[0].1);
            let seats: Vec<u8> = votes.iter().filter(|(_, h)| *h != reference).map(|(s, _)| *s).collect();
            self.out.events.push(HostEvent::Desync { turn: t, seats: seats.clone() });
            self.begin_locating(t, reference, votes, now);
            return;
        }
        self.finish_if_done();
    }

    fn finish_if_done(&mut self) {
        if self.phase == Phase::Running && self.compared == self.config.turns {
            self.end();
        }
    }

    pub(crate) fn end(&mut self) {
        self.phase = Phase::Over;
        if let Some(mut w) = self.replay.take() {
            // Always a keyframe after the last turn: after a desync it is the state to compare.
            let _ = w.keyframe(&self.world);
            self.replay_done = w.finish().ok().map(|tee| self.stop_streaming(tee));
        }
        // After a resync the report was kept before the game ended: it gets the whole game's replay.
        if let Some(r) = self.report.as_mut().filter(|r| r.replay.is_none()) {
            r.replay.clone_from(&self.replay_done);
        }
        let turns = self.closed;
        self.broadcast(&HostMsg::End { turns, in_sync: self.in_sync });
        let final_hash = self.hashes.last().copied().unwrap_or(self.start_hash);
        self.out.events.push(HostEvent::Ended { turns, final_hash, in_sync: self.in_sync });
    }

    /// Advances the host's turn clock; call it often (every few milliseconds of `now`).
    pub fn tick(&mut self, now: u64) {
        self.close_seatless(now);
        match self.phase {
            Phase::Lobby => {
                let joined = self.seats.iter().filter(|s| s.conn.is_some()).count();
                let seats = u8::try_from(self.seats.len()).unwrap_or(u8::MAX);
                self.tell_waiting(Some(Waiting::Players { joined: u8::try_from(joined).unwrap_or(u8::MAX), seats }), now);
            }
            Phase::Locating => {
                let turn = self.locating.as_ref().map_or(self.compared, desync::Locating::turn);
                self.tell_waiting(Some(Waiting::Desync { turn }), now);
            }
            Phase::Running | Phase::Over => {}
        }
        if self.phase == Phase::Locating {
            self.locate_tick(now);
            return;
        }
        if self.phase != Phase::Running {
            return;
        }
        self.drop_laggards(now);
        self.drop_lagging_observers();
        if self.end_if_deserted(now) || self.phase != Phase::Running || now < self.next_boundary {
            return;
        }
        for c in self.conns.values_mut() {
            c.frames = 0;
            c.bytes = 0;
        }
        // Wait for a peer that is too far behind rather than run away from it, and say so.
        let slowest = self.seats.iter().enumerate().filter(|(_, s)| !s.gone).min_by_key(|(_, s)| s.hashed).map(|(k, s)| (k, s.hashed));
        if let Some((k, hashed)) = slowest
            && hashed + self.config.max_lead < self.closed
        {
            let since = self.closed_at.get(hashed as usize).copied().unwrap_or(now);
            let seat = u8::try_from(k + 1).unwrap_or(u8::MAX);
            let status = Waiting::Seat { seat, behind_ms: now.saturating_sub(since), drops_at_ms: self.config.drop_after_ms };
            return self.tell_waiting(Some(status), now);
        }
        self.tell_waiting(None, now);
        self.next_boundary = now + u64::from(self.config.turn_ms);
        self.adapt_delay();
        self.current += 1;
        self.ping_all(now);
        self.close_through(self.current + self.delay, now);
    }

    /// While no seat plays, no turn closes (nobody would step it); after the drop time without a
    /// seat coming back the game ends, its replay finished, rather than wait for ever. Returns
    /// whether no seat plays.
    fn end_if_deserted(&mut self, now: u64) -> bool {
        if self.phase != Phase::Running || self.seats.iter().any(|s| !s.gone) {
            self.deserted_since = None;
            return false;
        }
        let since = *self.deserted_since.get_or_insert(now);
        if now.saturating_sub(since) > self.config.drop_after_ms {
            self.deserted = true;
            self.out.events.push(HostEvent::Deserted { turns: self.closed });
            self.end();
        }
        true
    }

    /// Tells every connection what the game waits for: at once when it starts waiting for
    /// something else, then every [`STATUS_EVERY_MS`]; `None` when it waits no more. The log gets
    /// a line when what it waits for changes (a seat that is later behind is the same wait).
    fn tell_waiting(&mut self, status: Option<Waiting>, now: u64) {
        let Some(status) = status else {
            self.waiting = None;
            return;
        };
        let same_wait = |a: &Waiting, b: &Waiting| match (a, b) {
            (Waiting::Seat { seat: x, .. }, Waiting::Seat { seat: y, .. }) => x == y,
            _ => a == b,
        };
        let due = match &self.waiting {
            Some((old, at)) if same_wait(old, &status) => now.saturating_sub(*at) >= STATUS_EVERY_MS,
            _ => {
                self.out.events.push(HostEvent::Waiting(status.clone()));
                true
            }
        };
        if due {
            let conns: Vec<ConnId> = self.conns.iter().filter(|(_, c)| c.seat.is_some()).map(|(&k, _)| k).collect();
            for conn in conns {
                self.send(conn, &HostMsg::Waiting(status.clone()));
            }
            self.waiting = Some((status, now));
        } else if let Some((old, _)) = self.waiting.as_mut() {
            // The same wait, its figures updated; the time it was last told stays.
            *old = status;
        }
    }

    /// Closes the connections that have claimed no seat within [`HELLO_WITHIN_MS`].
    fn close_seatless(&mut self, now: u64) {
        let late: Vec<ConnId> = self
            .conns
            .iter_mut()
            .filter(|(_, c)| c.seat.is_none())
            .filter_map(|(&conn, c)| (now.saturating_sub(*c.seen_at.get_or_insert(now)) > HELLO_WITHIN_MS).then_some(conn))
            .collect();
        for conn in late {
            self.close(conn, format!("no Hello within {HELLO_WITHIN_MS} ms"));
        }
    }

    fn adapt_delay(&mut self) {
        if self.config.delay != Delay::Auto {
            return;
        }
        let target = target_delay(self.seats.iter().filter(|s| !s.gone).filter_map(|s| s.rtt), self.config.turn_ms);
        let old = self.delay;
        if target > self.delay {
            self.delay += 1;
            self.lower_streak = 0;
        } else if target < self.delay {
            // Lower only after a steady spell: a consistent delay feels better than a short one.
            self.lower_streak += 1;
            if self.lower_streak >= LOWER_AFTER {
                self.delay -= 1;
                self.lower_streak = 0;
            }
        } else {
            self.lower_streak = 0;
        }
        if self.delay != old {
            self.out.events.push(HostEvent::DelayChanged { turn: self.current + 1 + self.delay, delay: self.delay });
        }
    }

    fn drop_lagging_observers(&mut self) {
        let closed = self.closed;
        let late: Vec<(ConnId, u32)> =
            self.observers.iter().filter(|(_, w)| closed - w.hashed.min(closed) > MAX_OBSERVER_LAG).map(|(&c, w)| (c, w.hashed)).collect();
        for (conn, hashed) in late {
            self.close(conn, format!("the observer is {} turns behind, over the limit of {MAX_OBSERVER_LAG}", closed - hashed));
        }
    }

    fn drop_laggards(&mut self, now: u64) {
        let mut dropped = false;
        for k in 0..self.seats.len() {
            let s = &self.seats[k];
            if s.gone || s.hashed >= self.closed {
                continue;
            }
            let since = self.closed_at[s.hashed as usize];
            if now.saturating_sub(since) > self.config.drop_after_ms {
                let seat = k as u8 + 1;
                let behind_at = s.hashed;
                let s = &mut self.seats[k];
                s.gone = true;
                s.hashes.clear();
                if let Some(conn) = s.conn.take() {
                    self.close(conn, format!("seat {seat} dropped for lagging"));
                }
                self.out.events.push(HostEvent::Dropped { seat, behind_at });
                self.broadcast(&HostMsg::Dropped { seat });
                dropped = true;
            }
        }
        if dropped {
            self.compare(now);
        }
    }

    /// Closes every turn before `end` (and before the game's last): sends each one's commands,
    /// steps the host's world and records it.
    fn close_through(&mut self, end: u32, now: u64) {
        let end = end.min(self.config.turns);
        while self.closed < end {
            let turn = self.closed;
            let mut commands = self.script.turn_commands(&self.world);
            commands.extend(self.pending.remove(&turn).unwrap_or_default());
            self.budgets.remove(&turn);
            commands.sort_by_key(Command::order_key);
            self.broadcast(&HostMsg::Turn { turn, delay: self.delay, agreed: self.compared, commands: commands.clone() });
            self.recorder.agreed(self.compared);
            if let Some(w) = self.replay.as_mut().filter(|w| w.keyframe_due(&self.world)) {
                // Recording into memory cannot fail.
                let _ = w.keyframe(&self.world);
            }
            let report = self.world.step(&commands);
            self.script.observe(&report);
            if let Some(w) = self.replay.as_mut() {
                let _ = w.turn(&commands, &report);
                if let Some(reason) = w.get_mut().failed.take() {
                    self.out.events.push(HostEvent::NotRecording { reason });
                }
            }
            self.hashes.push(report.hash);
            self.recorder.record(turn, &commands, report.hash, &self.world);
            self.history.push(commands);
            self.closed_at.push(now);
            self.closed += 1;
        }
    }

    fn ping_all(&mut self, now: u64) {
        let id = self.next_ping;
        self.next_ping += 1;
        for k in 0..self.seats.len() {
            let s = &mut self.seats[k];
            if let (Some(conn), false) = (s.conn, s.gone) {
                s.pings.insert(id, now);
                // Unanswered pings of long ago are forgotten, so a silent peer cannot grow the map.
                while s.pings.len() > 64 {
                    s.pings.pop_first();
                }
                self.send(conn, &HostMsg::Ping { id });
            }
        }
    }

    /// Sends a message; one over the frame limit is never sent, and its connection is closed.
    fn send(&mut self, conn: ConnId, msg: &HostMsg) {
        let Some(c) = self.conns.get_mut(&conn) else { return };
        match c.link.try_encode(msg) {
            Ok(frame) => {
                self.traffic.sent(frame.len());
                self.out.frames.push((conn, frame));
            }
            // Orders are bounded so that a turn always fits; this is a scenario text or a
            // scenario script over the limit, which the connection cannot be given.
            Err(e) => self.close(conn, format!("a message for it could not be sent: {e}")),
        }
    }

    /// Sends to every seat still playing and every observer.
    fn broadcast(&mut self, msg: &HostMsg) {
        let observers: Vec<ConnId> = self.observers.keys().copied().collect();
        self.broadcast_seats(msg);
        for conn in observers {
            self.send(conn, msg);
        }
    }

    /// Sends to every seat still playing.
    fn broadcast_seats(&mut self, msg: &HostMsg) {
        let conns: Vec<ConnId> = self.seats.iter().filter(|s| !s.gone).filter_map(|s| s.conn).collect();
        for conn in conns {
            self.send(conn, msg);
        }
    }

    /// Drops a seat during the game: its connection is closed with `reason`, every client is told,
    /// its units stay, idle. Returns whether it was still playing (else nothing is done).
    fn drop_seat(&mut self, seat: u8, reason: String) -> bool {
        let s = &mut self.seats[usize::from(seat - 1)];
        if s.gone {
            return false;
        }
        s.gone = true;
        s.hashes.clear();
        if let Some(conn) = s.conn.take() {
            self.close(conn, reason);
        }
        self.broadcast(&HostMsg::Dropped { seat });
        true
    }

    /// Closes a connection, telling it why; a seat it held is left.
    fn close(&mut self, conn: ConnId, reason: String) {
        self.send(conn, &HostMsg::Bye { reason: reason.clone() });
        let Some(c) = self.conns.remove(&conn) else { return };
        self.out.close.push(conn);
        self.out.events.push(HostEvent::Closed { conn, reason });
        self.observers.remove(&conn);
        if let Some(seat) = c.seat.filter(|s| *s != OBSERVER_SEAT) {
            self.leave_seat(seat);
        }
    }

    /// A seat's connection is gone: before the start the seat is only free again; after it, its
    /// player is gone (its units stay, idle).
    fn leave_seat(&mut self, seat: u8) {
        let s = &mut self.seats[usize::from(seat - 1)];
        s.conn = None;
        if !s.gone && self.phase != Phase::Lobby {
            s.gone = true;
            s.hashes.clear();
            self.out.events.push(HostEvent::Left { seat });
            self.broadcast(&HostMsg::Dropped { seat });
        }
    }
}
