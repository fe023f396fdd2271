//! The replay file: a versioned header, then one record per turn, keyframe snapshots every few
//! turns, and a footer; written append-only as the game runs, read back as a stream.
//!
//! The byte layout is specified in `docs/replay-format.md`; this module is its only implementation.
//! In short (all integers little-endian):
//!
//! ```text
//! header   magic "PHXRPLY\0" (8) | format version u32 | payload length u32 | payload | blake3 of the bytes before it (32)
//! record   tag u8 | payload length u32 | prefix check (3) | payload | blake3 of tag, length and payload (32)
//!          tag 'T' a turn, 'K' a keyframe, 'E' the footer (the last record)
//! keyframe turn u32 | snapshot length u32 | the snapshot as one zstd frame, the previous keyframe's snapshot its dictionary
//! ```
//!
//! # Reading damaged or cut-off files
//!
//! The reader never panics and allocates at most about [`MAX_RECORD`] bytes at a time for a record
//! (growing with the bytes actually present, not with the lengths a file claims), and for a
//! keyframe a buffer of its stated snapshot length, at most [`MAX_KEYFRAME_SNAPSHOT`], beside the
//! previous keyframe's snapshot (its dictionary). A file that ends inside a
//! record, as one written by a crashed process does, reads as its whole records before the cut,
//! with [`End::Truncated`] saying where; every other damage is a [`ReplayError`] naming the byte
//! offset, the section and what was expected. A damaged length field cannot pass for a cut-off
//! file: the 3-byte prefix check covers tag and length, and the record checksum covers the payload.

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use sim::digest_tree::{Digest, StateDigest};
use sim::{Command, Settings, TurnReport, World};

/// The first bytes of every replay.
pub const MAGIC: [u8; 8] = *b"PHXRPLY\0";

/// Version of the byte layout this reader reads and this writer writes. Every change to the
/// layout, the header or a record payload bumps it; other versions are refused, naming both.
/// Version 2: the formation commands (`FormGroup`, `MoveFormation`, `SetLayout`, `Disband`).
/// Version 3: the waypoint commands (`SetWaypoints`, `SetWaypointPriorities`, `MoveByWaypoints`)
/// and the `waypoints` state component.
/// Version 4: `turn_rate` in the motion settings and in spawns; `SpawnFromBuilding`, `CancelSpawns` and the kind
/// of a range goal in the commands.
/// Version 5: the game rules in the header ([`ReplayHeader::rules`]) and game commands
/// (`CommandKind::Game`).
/// Version 6: keyframes compressed with zstd, each with the previous keyframe's snapshot as its
/// dictionary, and their snapshot length stated before them.
/// Version 7: `long_search_budget` in the settings, after `max_paths_per_turn`; keyframes are
/// snapshots of format 10.
/// Version 8: keyframes are snapshots of format 11 (the units' order groups); nothing else changed.
/// Version 9: a game command names its rule module (`CommandKind::Game::rules`), keyframes are
/// snapshots of format 12 (one game section per module), the header's `rules` names the game
/// the scenario names (its modules are in the component names), and a turn record stores only
/// the state roots that changed since the previous turn record (all of them in the first).
pub const REPLAY_VERSION: u32 = 9;

/// The engine that writes replays, as recorded in their header.
pub const ENGINE: &str = concat!("phalanx ", env!("CARGO_PKG_VERSION"));

/// Largest header payload (the embedded scenario is most of it). `[Units: bytes]`
pub const MAX_HEADER: u32 = 1 << 26;

/// Largest record payload (a keyframe of a 2048 × 2048 navcell world fits). `[Units: bytes]`
pub const MAX_RECORD: u32 = 1 << 27;

/// Largest snapshot a keyframe may decompress to: the largest snapshot payload
/// (`sim::snapshot::MAX_PAYLOAD`) and its 52 bytes of framing. A keyframe states its snapshot's
/// length before the compressed bytes; a larger length is damage, and decompression writes into
/// a buffer of exactly the stated length, so it allocates at most this much. `[Units: bytes]`
pub const MAX_KEYFRAME_SNAPSHOT: u32 = sim::snapshot::MAX_PAYLOAD as u32 + 52;

/// Most bytes of keyframe snapshots [`Replay::read`] holds for a whole replay in memory (1 GiB:
/// the demo's ten keyframes are 7.2 MB, an hour of it 0.26 GB); the tools that read a replay as a
/// stream hold one keyframe at a time. `[Units: bytes]`
pub const MAX_HELD_KEYFRAMES: u64 = 1 << 30;

/// The zstd level keyframes are compressed at (zstd's default: the higher levels save 10–20%
/// more at 5–50 times the time; BENCHMARKS.md, "Replays: keyframes").
pub const KEYFRAME_LEVEL: i32 = 3;

/// Largest turn record payload. Decoding one allocates at most a few times this (commands are
/// small structs with a vector or string each). `[Units: bytes]`
pub const MAX_TURN_RECORD: u32 = 1 << 24;

/// Most commands one turn record may hold.
pub const MAX_COMMANDS_PER_TURN: usize = 1 << 16;

/// Size of a whole footer record: prefix, payload (turn count and final hash), checksum.
const FOOTER_RECORD: usize = 8 + 36 + 32;

const HEADER_PREFIX: u64 = 16;
const RECORD_PREFIX: u64 = 8;
const CHECKSUM: u64 = 32;

const TAG_TURN: u8 = b'T';
const TAG_KEYFRAME: u8 = b'K';
const TAG_FOOTER: u8 = b'E';

/// What a replay says about the game it records, written once at its start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayHeader {
    /// The engine that wrote it ([`ENGINE`] of the writer).
    pub engine: String,
    /// The snapshot format version of its keyframes (`sim::snapshot::SNAPSHOT_VERSION`).
    pub snapshot_version: u32,
    /// The state encoding version of its hashes (`sim::state_hash::FORMAT_VERSION`).
    pub state_version: u32,
    /// The game settings (turn length, players, seed, limits, motion constants).
    pub settings: Settings,
    /// The random seed (also in `settings`; here for tools that only read the header).
    pub seed: u64,
    /// A keyframe follows every turn record whose next turn is a multiple of this; 0 for none.
    pub keyframe_every: u32,
    /// The scenario's name.
    pub scenario_name: String,
    /// The scenario, self-contained (every referenced file inlined): the world is rebuilt from it.
    pub scenario: String,
    /// blake3 of `scenario`.
    pub scenario_digest: Digest,
    /// The names of the state digest's components, in order; every turn record holds one root per
    /// name.
    pub components: Vec<String>,
    /// The game rules the world runs, by name and version; `None` for a world without a game.
    pub rules: Option<(String, u32)>,
}

/// The first fields of [`ReplayHeader`], decoded alone to check compatibility first.
#[derive(Deserialize)]
struct HeaderVersions {
    engine: String,
    snapshot_version: u32,
    state_version: u32,
}

/// One turn: the commands it was stepped with and the digest of the state it ended with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// The turn stepped.
    pub turn: u32,
    /// The commands given to that step, in the order given.
    pub commands: Vec<Command>,
    /// The roots of the state digest after the turn, one per header component.
    pub roots: Vec<Digest>,
}

/// A turn record as stored: only the roots that differ from the previous turn record's (all of
/// them in the first), each with its component's index in the header's list, ascending. Most of
/// a turn's components (terrain, passability, settings, a game's world state) do not change
/// from one turn to the next, and a root is 32 bytes.
#[derive(Serialize, Deserialize)]
struct StoredTurn {
    turn: u32,
    commands: Vec<Command>,
    changed: Vec<(u16, Digest)>,
}

impl StoredTurn {
    /// The stored form of `record`, after `previous`'s roots (`None` for the first record).
    fn of(record: &TurnRecord, previous: Option<&[Digest]>) -> Self {
        let changed = record
            .roots
            .iter()
            .enumerate()
            .filter(|&(k, root)| previous.and_then(|p| p.get(k)) != Some(root))
            .map(|(k, root)| (k as u16, *root))
            .collect();
        Self { turn: record.turn, commands: record.commands.clone(), changed }
    }

    /// The whole record again, from the previous record's roots (`None` for the first): its
    /// roots, or what is wrong with the changed ones.
    fn record(self, previous: Option<&[Digest]>, components: usize) -> Result<TurnRecord, String> {
        let mut roots = match previous {
            Some(p) => p.to_vec(),
            None => {
                if self.changed.len() != components {
                    return Err(format!("all {components} state roots in the first turn record, found {}", self.changed.len()));
                }
                vec![[0; 32]; components]
            }
        };
        let mut last = None;
        for &(k, root) in &self.changed {
            if usize::from(k) >= components || last.is_some_and(|l| l >= k) {
                return Err(format!("changed state roots by ascending component index below {components}, found index {k}"));
            }
            last = Some(k);
            roots[usize::from(k)] = root;
        }
        Ok(TurnRecord { turn: self.turn, commands: self.commands, roots })
    }
}

impl TurnRecord {
    /// The state digest this record stores (the state after the turn, whose turn counter is
    /// `turn + 1`).
    pub fn digest(&self, components: &[String]) -> StateDigest {
        let pairs = components.iter().cloned().zip(self.roots.iter().copied()).collect();
        StateDigest::new(self.turn.wrapping_add(1), pairs)
    }
}

/// The last record of a finished replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footer {
    /// How many turns were recorded.
    pub turns: u32,
    /// The state hash after the last turn.
    pub final_hash: Digest,
}

/// A record after the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A turn.
    Turn(TurnRecord),
    /// The world at the start of `turn` (after the turn record of `turn - 1`), as snapshot bytes
    /// (`sim::World::save`), decompressed.
    Keyframe {
        /// The turn the world is about to step.
        turn: u32,
        /// The snapshot.
        snapshot: Vec<u8>,
    },
    /// The footer.
    Footer(Footer),
}

/// How a replay ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum End {
    /// Its footer was read.
    Footer(Footer),
    /// The bytes stop inside a record or between records with no footer (a crashed writer).
    Truncated {
        /// Offset of the first byte after the last whole record.
        offset: u64,
    },
    /// Reading stopped at a damaged record (the error said where and why).
    Damaged {
        /// Offset of the damaged record.
        offset: u64,
    },
}

/// Why bytes are not a readable replay.
#[derive(Debug)]
pub enum ReplayError {
    /// A read failed.
    Io(std::io::Error),
    /// The bytes are damaged or not a replay.
    Damaged {
        /// Byte offset of the section where reading failed.
        offset: u64,
        /// Which section: `header`, `turn record`, `keyframe record`, `footer`, `record`.
        section: &'static str,
        /// What was expected there, and what was found.
        expected: String,
    },
    /// A replay of another format or state version.
    Incompatible {
        /// What differs, naming both versions.
        message: String,
    },
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Io(e) => write!(f, "read error: {e}"),
            ReplayError::Damaged { offset, section, expected } => write!(f, "offset {offset} ({section}): {expected}"),
            ReplayError::Incompatible { message } => write!(f, "incompatible replay: {message}"),
        }
    }
}

impl std::error::Error for ReplayError {}

impl From<std::io::Error> for ReplayError {
    fn from(e: std::io::Error) -> Self {
        ReplayError::Io(e)
    }
}

fn damaged(offset: u64, section: &'static str, expected: impl Into<String>) -> ReplayError {
    ReplayError::Damaged { offset, section, expected: expected.into() }
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    sim::state_hash::encode(value)
}

/// Decodes a whole payload; bincode's limit bounds what a length inside it may allocate.
fn decode<T: serde::de::DeserializeOwned>(payload: &[u8], offset: u64, section: &'static str, what: &str) -> Result<T, ReplayError> {
    let config = sim::state_hash::CONFIG.with_limit::<{ MAX_RECORD as usize }>();
    match bincode::serde::decode_from_slice::<T, _>(payload, config) {
        Ok((value, used)) if used == payload.len() => Ok(value),
        Ok((_, used)) => Err(damaged(offset, section, format!("{what} of {} bytes, found {} bytes more", used, payload.len() - used))),
        Err(e) => Err(damaged(offset, section, format!("{what}: {e}"))),
    }
}

/// A keyframe's snapshot compressed against the previous keyframe's (empty for the first): one
/// zstd frame that states its content size.
fn compress_keyframe(snapshot: &[u8], previous: &[u8]) -> std::io::Result<Vec<u8>> {
    zstd::bulk::Compressor::with_dictionary(KEYFRAME_LEVEL, previous)?.compress(snapshot)
}

/// A keyframe's snapshot from its zstd frame, which must state and hold exactly `size` bytes
/// (at most [`MAX_KEYFRAME_SNAPSHOT`], checked by the caller); `previous` is the dictionary.
/// Decompression writes into a buffer of `size` bytes and fails rather than go past it.
fn decompress_keyframe(frame: &[u8], size: usize, previous: &[u8]) -> Result<Vec<u8>, String> {
    match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n == size as u64 => {}
        Ok(Some(n)) => return Err(format!("a zstd frame of the stated {size} bytes, found one of {n} bytes")),
        Ok(None) | Err(_) => return Err(format!("a zstd frame that states its size ({size} bytes), found none")),
    }
    let mut decompressor =
        zstd::bulk::Decompressor::with_dictionary(previous).map_err(|e| format!("the previous keyframe as a dictionary: {e}"))?;
    let snapshot = decompressor.decompress(frame, size).map_err(|e| format!("a zstd frame of {size} bytes: {e}"))?;
    if snapshot.len() != size {
        return Err(format!("a zstd frame of {size} bytes, found {} bytes", snapshot.len()));
    }
    Ok(snapshot)
}

fn record_check(tag: u8, len: u32) -> [u8; 3] {
    let mut prefix = [0; 5];
    prefix[0] = tag;
    prefix[1..].copy_from_slice(&len.to_le_bytes());
    let h = blake3::hash(&prefix);
    [h.as_bytes()[0], h.as_bytes()[1], h.as_bytes()[2]]
}

fn record_checksum(prefix: &[u8], payload: &[u8]) -> Digest {
    let mut h = blake3::Hasher::new();
    h.update(prefix);
    h.update(payload);
    *h.finalize().as_bytes()
}

/// The header as bytes.
pub fn header_bytes(header: &ReplayHeader) -> Vec<u8> {
    let payload = encode(header);
    let mut out = Vec::with_capacity(payload.len() + 48);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&REPLAY_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&payload);
    let sum = blake3::hash(&out);
    out.extend_from_slice(sum.as_bytes());
    out
}

fn record_bytes(tag: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut out = Vec::with_capacity(payload.len() + 40);
    out.push(tag);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&record_check(tag, len));
    out.extend_from_slice(payload);
    let sum = record_checksum(&out[..5], payload);
    out.extend_from_slice(&sum);
    out
}

/// Writes a replay as the game runs: the header at once, then each turn as it is stepped, each
/// flushed before the next turn so a crash loses at most the turn being written.
pub struct ReplayWriter<W: Write> {
    out: W,
    header: ReplayHeader,
    next_turn: Option<u32>,
    turns: u32,
    last_hash: Option<Digest>,
    bytes: u64,
    /// The snapshot of the last keyframe written: the next one's dictionary.
    previous_keyframe: Vec<u8>,
    /// The roots of the last turn written: the next record stores those that differ.
    previous_roots: Option<Vec<Digest>>,
}

impl<W: Write> ReplayWriter<W> {
    /// Starts a replay: writes and flushes the header.
    ///
    /// # Errors
    /// The writer's error, or `InvalidInput` when the header is larger than [`MAX_HEADER`].
    pub fn new(mut out: W, header: ReplayHeader) -> std::io::Result<Self> {
        let bytes = header_bytes(&header);
        if bytes.len() as u64 > u64::from(MAX_HEADER) + HEADER_PREFIX + CHECKSUM {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "replay header above MAX_HEADER"));
        }
        out.write_all(&bytes)?;
        out.flush()?;
        Ok(Self {
            out,
            header,
            next_turn: None,
            turns: 0,
            last_hash: None,
            bytes: bytes.len() as u64,
            previous_keyframe: Vec::new(),
            previous_roots: None,
        })
    }

    /// The header written.
    pub fn header(&self) -> &ReplayHeader {
        &self.header
    }

    /// The writer the replay goes to (to redirect or inspect it between records).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    fn record(&mut self, tag: u8, payload: &[u8]) -> std::io::Result<()> {
        if payload.len() as u64 > u64::from(MAX_RECORD) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "replay record above MAX_RECORD"));
        }
        let bytes = record_bytes(tag, payload);
        self.out.write_all(&bytes)?;
        self.out.flush()?;
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Records one stepped turn: the commands the step was given and its report.
    ///
    /// # Errors
    /// The writer's error; `InvalidInput` when turns are not consecutive or the report's components
    /// are not the header's.
    pub fn turn(&mut self, commands: &[Command], report: &TurnReport) -> std::io::Result<()> {
        let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
        let next = self.next_turn.unwrap_or(0);
        if report.turn != next {
            return Err(invalid(format!("turn {} recorded where turn {next} is next (a replay starts at turn 0)", report.turn)));
        }
        let names = report.digest.components.iter().map(|(n, _)| n);
        if !names.eq(self.header.components.iter()) {
            return Err(invalid("the turn's digest components are not the header's".into()));
        }
        if commands.len() > MAX_COMMANDS_PER_TURN {
            return Err(invalid(format!("{} commands in one turn, at most {MAX_COMMANDS_PER_TURN}", commands.len())));
        }
        let record = TurnRecord {
            turn: report.turn,
            commands: commands.to_vec(),
            roots: report.digest.components.iter().map(|(_, r)| *r).collect(),
        };
        let payload = encode(&StoredTurn::of(&record, self.previous_roots.as_deref()));
        if payload.len() > MAX_TURN_RECORD as usize {
            return Err(invalid(format!("a turn record of {} bytes, at most {MAX_TURN_RECORD}", payload.len())));
        }
        self.record(TAG_TURN, &payload)?;
        self.previous_roots = Some(record.roots);
        self.next_turn = Some(report.turn.wrapping_add(1));
        self.turns += 1;
        self.last_hash = Some(report.hash);
        Ok(())
    }

    /// Whether a keyframe is due before the world steps its next turn.
    pub fn keyframe_due(&self, world: &World) -> bool {
        let every = self.header.keyframe_every;
        every != 0 && self.turns > 0 && world.turn().is_multiple_of(every)
    }

    /// Records the world's state as a keyframe (call between turns): its snapshot compressed
    /// against the previous keyframe's.
    ///
    /// # Errors
    /// The writer's error; `InvalidInput` when the world is not at the turn after the last record
    /// or its snapshot is larger than [`MAX_KEYFRAME_SNAPSHOT`].
    pub fn keyframe(&mut self, world: &World) -> std::io::Result<()> {
        let invalid = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, m.to_owned());
        if world.turn() != self.next_turn.unwrap_or(0) {
            return Err(invalid("keyframe of another turn than the next"));
        }
        let snapshot = world.save();
        let size = u32::try_from(snapshot.len())
            .ok()
            .filter(|&n| n <= MAX_KEYFRAME_SNAPSHOT)
            .ok_or_else(|| invalid("snapshot above MAX_KEYFRAME_SNAPSHOT"))?;
        let mut payload = world.turn().to_le_bytes().to_vec();
        payload.extend_from_slice(&size.to_le_bytes());
        payload.extend_from_slice(&compress_keyframe(&snapshot, &self.previous_keyframe)?);
        self.record(TAG_KEYFRAME, &payload)?;
        self.previous_keyframe = snapshot;
        Ok(())
    }

    /// Writes the footer and returns the writer.
    ///
    /// # Errors
    /// The writer's error.
    pub fn finish(mut self) -> std::io::Result<W> {
        let footer = Footer { turns: self.turns, final_hash: self.last_hash.unwrap_or([0; 32]) };
        self.record(TAG_FOOTER, &encode(&footer))?;
        Ok(self.out)
    }
}

/// Reads a replay as a stream of records.
pub struct ReplayReader<R: Read> {
    input: R,
    header: ReplayHeader,
    offset: u64,
    next_turn: u32,
    turns: u32,
    last_hash: Option<Digest>,
    end: Option<End>,
    /// The turn of the last keyframe read, to refuse a second one of the same turn.
    keyframe_of: Option<u32>,
    /// A keyframe off the header's cadence was read: only the footer may follow it.
    closing_keyframe: Option<(u64, u32)>,
    /// The snapshot of the last keyframe read: the next one's dictionary.
    previous_keyframe: Vec<u8>,
    /// The roots of the last turn record read: the next one stores only those that differ.
    previous_roots: Option<Vec<Digest>>,
}

/// Whether bytes are one whole, valid footer record (prefix check and checksum).
fn is_footer_record(bytes: &[u8]) -> bool {
    bytes.len() == FOOTER_RECORD
        && bytes[0] == TAG_FOOTER
        && u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize == FOOTER_RECORD - 40
        && bytes[5..8] == record_check(bytes[0], (FOOTER_RECORD - 40) as u32)
        && record_checksum(&bytes[..5], &bytes[8..FOOTER_RECORD - 32])[..] == bytes[FOOTER_RECORD - 32..]
}

/// What the first bytes of a file that is not a replay look like, for the message that refuses it.
fn describe_start(prefix: &[u8]) -> String {
    if prefix.is_empty() {
        return "an empty file".into();
    }
    if prefix.starts_with(&sim::snapshot::MAGIC) {
        return "the magic PHXSNAP of a snapshot (it holds one turn, not a replay)".into();
    }
    let shown = &prefix[..prefix.len().min(8)];
    let text: String = shown.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { char::from(b) } else { '.' }).collect();
    let hex: Vec<String> = shown.iter().map(|b| format!("{b:02x}")).collect();
    format!("the bytes {} ({text:?})", hex.join(" "))
}

/// Reads up to `n` bytes (fewer only at the end of the input), growing the buffer with the bytes
/// actually read, so a length field cannot make it allocate more than the input holds.
fn read_up_to(input: &mut impl Read, n: u64, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    input.take(n).read_to_end(buf)?;
    Ok(())
}

impl<R: Read> ReplayReader<R> {
    /// Reads and checks the header.
    ///
    /// # Errors
    /// [`ReplayError`] for a header that is damaged, cut off or of another version.
    pub fn new(mut input: R) -> Result<Self, ReplayError> {
        let mut prefix = Vec::new();
        read_up_to(&mut input, HEADER_PREFIX, &mut prefix)?;
        if prefix.len() < 8 || prefix[..8] != MAGIC {
            if !prefix.is_empty() && prefix.len() < 8 && MAGIC.starts_with(&prefix) {
                return Err(damaged(0, "header", format!("the magic PHXRPLY, found only {} bytes", prefix.len())));
            }
            return Err(damaged(0, "header", format!("the magic PHXRPLY of a replay file, found {}", describe_start(&prefix))));
        }
        if prefix.len() < 12 {
            return Err(damaged(8, "header", "the format version, found the end of the file"));
        }
        let version = u32::from_le_bytes(prefix[8..12].try_into().expect("4 bytes"));
        if version != REPLAY_VERSION {
            return Err(ReplayError::Incompatible {
                message: format!("offset 8 (header): replay format version {version}, this reader reads version {REPLAY_VERSION} only"),
            });
        }
        if prefix.len() < 16 {
            return Err(damaged(12, "header", "the header length, found the end of the file"));
        }
        let len = u32::from_le_bytes(prefix[12..16].try_into().expect("4 bytes"));
        if len > MAX_HEADER {
            return Err(damaged(12, "header", format!("a header length of at most {MAX_HEADER}, found {len}")));
        }
        let mut rest = Vec::new();
        read_up_to(&mut input, u64::from(len) + CHECKSUM, &mut rest)?;
        if rest.len() as u64 != u64::from(len) + CHECKSUM {
            return Err(damaged(
                HEADER_PREFIX,
                "header",
                format!("{} header bytes, found the end of the file after {}", u64::from(len) + CHECKSUM, rest.len()),
            ));
        }
        let (payload, sum) = rest.split_at(len as usize);
        let mut h = blake3::Hasher::new();
        h.update(&prefix);
        h.update(payload);
        if h.finalize().as_bytes()[..] != sum[..] {
            return Err(damaged(HEADER_PREFIX + u64::from(len), "header", "the header checksum: the header is damaged"));
        }
        // The versions first (they lead the header), so that a replay whose settings or commands
        // have another layout is refused naming the versions rather than failing to decode.
        let config = sim::state_hash::CONFIG.with_limit::<{ MAX_HEADER as usize }>();
        let versions = bincode::serde::decode_from_slice::<HeaderVersions, _>(payload, config)
            .map_err(|e| damaged(HEADER_PREFIX, "header", format!("the engine and format versions: {e}")))?
            .0;
        if versions.snapshot_version != sim::snapshot::SNAPSHOT_VERSION || versions.state_version != sim::state_hash::FORMAT_VERSION {
            return Err(ReplayError::Incompatible {
                message: format!(
                    "recorded by {} with snapshot format {} and state encoding {}; this is {ENGINE} with snapshot format {} and state encoding {}",
                    versions.engine,
                    versions.snapshot_version,
                    versions.state_version,
                    sim::snapshot::SNAPSHOT_VERSION,
                    sim::state_hash::FORMAT_VERSION
                ),
            });
        }
        let header: ReplayHeader = decode(payload, HEADER_PREFIX, "header", "a replay header")?;
        if blake3::hash(header.scenario.as_bytes()).as_bytes() != &header.scenario_digest {
            return Err(damaged(HEADER_PREFIX, "header", "the scenario to match its digest"));
        }
        Ok(Self {
            input,
            header,
            offset: HEADER_PREFIX + u64::from(len) + CHECKSUM,
            next_turn: 0,
            turns: 0,
            last_hash: None,
            end: None,
            keyframe_of: None,
            closing_keyframe: None,
            previous_keyframe: Vec::new(),
            previous_roots: None,
        })
    }

    /// The header.
    pub fn header(&self) -> &ReplayHeader {
        &self.header
    }

    /// The offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How the replay ended, once [`next_record`](Self::next_record) has returned `None`.
    pub fn end(&self) -> Option<End> {
        self.end
    }

    /// The next record; `None` after the footer or at a cut.
    ///
    /// # Errors
    /// [`ReplayError`] naming the record's offset and what was expected; after an error the reader
    /// returns `None`.
    pub fn next_record(&mut self) -> Result<Option<Record>, ReplayError> {
        if self.end.is_some() {
            return Ok(None);
        }
        match self.read_record() {
            Ok(r) => Ok(r),
            Err(e) => {
                self.end = Some(End::Damaged { offset: self.offset });
                Err(e)
            }
        }
    }

    /// Whether the header's cadence puts a keyframe before `turn`: a positive multiple of
    /// `keyframe_every` (none when it is 0).
    fn on_cadence(&self, turn: u32) -> bool {
        let every = self.header.keyframe_every;
        every != 0 && turn > 0 && turn.is_multiple_of(every)
    }

    fn off_cadence(&self, turn: u32) -> String {
        let every = self.header.keyframe_every;
        let cadence = if every == 0 { "declares no keyframes".to_owned() } else { format!("declares one every {every} turns") };
        format!(
            "a keyframe only where the header's cadence puts one (it {cadence}) or just before the footer, found one of turn {turn} followed by more records"
        )
    }

    fn read_record(&mut self) -> Result<Option<Record>, ReplayError> {
        let at = self.offset;
        let mut prefix = Vec::new();
        read_up_to(&mut self.input, RECORD_PREFIX, &mut prefix)?;
        if (prefix.len() as u64) < RECORD_PREFIX {
            self.end = Some(End::Truncated { offset: at });
            return Ok(None);
        }
        let tag = prefix[0];
        let len = u32::from_le_bytes(prefix[1..5].try_into().expect("4 bytes"));
        if prefix[5..8] != record_check(tag, len) {
            return Err(damaged(at, "record", "the record prefix check: the tag or length is damaged"));
        }
        let section = match tag {
            TAG_TURN => "turn record",
            TAG_KEYFRAME => "keyframe record",
            TAG_FOOTER => "footer",
            _ => return Err(damaged(at, "record", format!("a record tag T, K or E, found byte {tag:#04x}"))),
        };
        let limit = match tag {
            TAG_TURN => MAX_TURN_RECORD,
            TAG_KEYFRAME => MAX_RECORD,
            _ => (FOOTER_RECORD - 40) as u32,
        };
        if len > limit {
            return Err(damaged(at + 1, section, format!("a length of at most {limit}, found {len}")));
        }
        let mut body = Vec::new();
        read_up_to(&mut self.input, u64::from(len) + CHECKSUM, &mut body)?;
        if (body.len() as u64) < u64::from(len) + CHECKSUM {
            // The input ends inside this record. A writer stopped while writing it leaves a
            // prefix of it; bytes lost from the middle of a file leave later records, the footer
            // last, inside what should have been this one: that is damage, not the end.
            if body.len() >= FOOTER_RECORD && is_footer_record(&body[body.len() - FOOTER_RECORD..]) {
                return Err(damaged(
                    at,
                    section,
                    format!("{} bytes, but a whole footer follows: bytes are missing inside the file", u64::from(len) + CHECKSUM),
                ));
            }
            self.end = Some(End::Truncated { offset: at });
            return Ok(None);
        }
        let (payload, sum) = body.split_at(len as usize);
        if record_checksum(&prefix[..5], payload)[..] != sum[..] {
            return Err(damaged(at, section, "the record checksum: the record is damaged"));
        }
        let payload_at = at + RECORD_PREFIX;
        if let Some((kf_at, k)) = self.closing_keyframe
            && tag != TAG_FOOTER
        {
            return Err(damaged(kf_at + RECORD_PREFIX, "keyframe record", self.off_cadence(k)));
        }
        let record = match tag {
            TAG_TURN => {
                let stored: StoredTurn = decode(payload, payload_at, section, "a turn record")?;
                if stored.turn != self.next_turn {
                    return Err(damaged(payload_at, section, format!("turn {}, found turn {}", self.next_turn, stored.turn)));
                }
                let record = stored
                    .record(self.previous_roots.as_deref(), self.header.components.len())
                    .map_err(|e| damaged(payload_at, section, e))?;
                if record.commands.len() > MAX_COMMANDS_PER_TURN {
                    return Err(damaged(payload_at, section, format!("at most {MAX_COMMANDS_PER_TURN} commands")));
                }
                if self.on_cadence(record.turn) && self.keyframe_of != Some(record.turn) {
                    return Err(damaged(
                        at,
                        section,
                        format!(
                            "the keyframe of turn {} first (the header declares one every {} turns), found the turn record",
                            record.turn, self.header.keyframe_every
                        ),
                    ));
                }
                self.next_turn = record.turn.wrapping_add(1);
                self.turns += 1;
                self.last_hash = Some(record.digest(&self.header.components).hash);
                self.previous_roots = Some(record.roots.clone());
                Record::Turn(record)
            }
            TAG_KEYFRAME => {
                if payload.len() < 8 {
                    return Err(damaged(payload_at, section, "a turn number, a snapshot length and a compressed snapshot"));
                }
                let turn = u32::from_le_bytes(payload[..4].try_into().expect("4 bytes"));
                if turn != self.next_turn {
                    return Err(damaged(payload_at, section, format!("a keyframe of turn {}, found turn {turn}", self.next_turn)));
                }
                if self.keyframe_of == Some(turn) {
                    return Err(damaged(at, section, format!("one keyframe of turn {turn}, found a second")));
                }
                if !self.on_cadence(turn) {
                    // Allowed only as the last record before the footer (the state a game ended
                    // in, such as the state to compare after a desync); checked at the next record.
                    self.closing_keyframe = Some((at, turn));
                }
                self.keyframe_of = Some(turn);
                let size = u32::from_le_bytes(payload[4..8].try_into().expect("4 bytes"));
                if size > MAX_KEYFRAME_SNAPSHOT {
                    return Err(damaged(
                        payload_at + 4,
                        section,
                        format!("a snapshot length of at most {MAX_KEYFRAME_SNAPSHOT}, found {size}"),
                    ));
                }
                let snapshot = decompress_keyframe(&payload[8..], size as usize, &self.previous_keyframe)
                    .map_err(|e| damaged(payload_at + 8, section, e))?;
                sim::snapshot::check_frame(&snapshot).map_err(|e| {
                    damaged(payload_at + 8, section, format!("a snapshot (offsets from its start, once decompressed): {e}"))
                })?;
                self.previous_keyframe.clone_from(&snapshot);
                Record::Keyframe { turn, snapshot }
            }
            _ => {
                let footer: Footer = decode(payload, payload_at, section, "a footer")?;
                if self.turns > 0 && self.on_cadence(self.next_turn) && self.keyframe_of != Some(self.next_turn) {
                    return Err(damaged(
                        at,
                        section,
                        format!(
                            "the keyframe of turn {} first (the header declares one every {} turns), found the footer",
                            self.next_turn, self.header.keyframe_every
                        ),
                    ));
                }
                if footer.turns != self.turns {
                    return Err(damaged(payload_at, section, format!("a count of {} turns, found {}", self.turns, footer.turns)));
                }
                if footer.final_hash != self.last_hash.unwrap_or([0; 32]) {
                    return Err(damaged(payload_at, section, "the final hash of the last turn record"));
                }
                let mut extra = Vec::new();
                read_up_to(&mut self.input, 1, &mut extra)?;
                let after = payload_at + u64::from(len) + CHECKSUM;
                if !extra.is_empty() {
                    return Err(damaged(after, "footer", "the end of the file after the footer, found more bytes"));
                }
                self.end = Some(End::Footer(footer));
                Record::Footer(footer)
            }
        };
        self.offset = at + RECORD_PREFIX + u64::from(len) + CHECKSUM;
        Ok(Some(record))
    }
}

/// A whole replay in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The header.
    pub header: ReplayHeader,
    /// Every turn, in order from turn 0.
    pub turns: Vec<TurnRecord>,
    /// Keyframes as (turn, snapshot bytes), in order.
    pub keyframes: Vec<(u32, Vec<u8>)>,
    /// How it ended.
    pub end: End,
}

impl Replay {
    /// Reads a whole replay, holding at most [`MAX_HELD_KEYFRAMES`] bytes of keyframe snapshots.
    ///
    /// # Errors
    /// As [`ReplayReader`].
    pub fn read(input: impl Read) -> Result<Self, ReplayError> {
        Self::read_holding(input, MAX_HELD_KEYFRAMES)
    }

    /// Reads a whole replay, holding at most `keyframe_bytes` bytes of keyframe snapshots: since
    /// keyframes are compressed, a small file could otherwise hold many large ones.
    ///
    /// # Errors
    /// As [`ReplayReader`]; damage at the keyframe record that would go over `keyframe_bytes`.
    pub fn read_holding(input: impl Read, keyframe_bytes: u64) -> Result<Self, ReplayError> {
        let mut reader = ReplayReader::new(input)?;
        let mut turns = Vec::new();
        let mut keyframes = Vec::new();
        let mut held = 0u64;
        loop {
            let at = reader.offset();
            let Some(record) = reader.next_record()? else { break };
            match record {
                Record::Turn(t) => turns.push(t),
                Record::Keyframe { turn, snapshot } => {
                    held += snapshot.len() as u64;
                    if held > keyframe_bytes {
                        return Err(damaged(
                            at,
                            "keyframe record",
                            format!(
                                "keyframes of at most {keyframe_bytes} bytes in all, decompressed, for a whole replay in memory, found more"
                            ),
                        ));
                    }
                    keyframes.push((turn, snapshot));
                }
                Record::Footer(_) => {}
            }
        }
        let end = reader.end().unwrap_or(End::Truncated { offset: reader.offset() });
        Ok(Self { header: reader.header, turns, keyframes, end })
    }

    /// The recorded state digest after `turn`.
    pub fn digest(&self, turn: u32) -> Option<StateDigest> {
        self.turns.get(turn as usize).map(|t| t.digest(&self.header.components))
    }
}

/// Whether bytes start like a replay (rather than a snapshot).
pub fn is_replay(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}
