//! A game's own rules inside the lockstep world: its per-unit, per-player and world state, its
//! commands and events, hashed, saved and replayed with the core's (docs/game-rules.md).
//!
//! A game implements [`Rules`] and makes its world with [`World::with_rules`]. From then on:
//!
//! - its commands travel as [`CommandKind::Game`] (made by [`command`]), are applied in the
//!   turn's `(turn, player, seq)` order among the core's, checked first by [`Rules::check`] (a
//!   refusal becomes [`Event::Rejected`] with [`RejectReason::Game`] and changes nothing), then
//!   carried out by [`Rules::apply`];
//! - once a turn, after the units moved and the formations planned and before the state digest,
//!   [`Rules::step`] runs with the turn's events so far;
//! - both act on the world only through [`Ctx`]: reads of the whole world, spatial queries in a
//!   total order, the game's own state (every write marks its digest), and actions
//!   ([`Ctx::act`]), which are core commands with exactly the core's validation;
//! - the game's state is four digest components after the core's (`NAME.units`, a tree of entity
//!   ranges like `units`; `NAME.objects`, the same over obstruction ids; `NAME.players`;
//!   `NAME.world`), a section of every snapshot (a snapshot of one ruleset or version never loads
//!   into another), and its events are [`Event::Game`] in the turn report.
//!
//! Determinism is the game's part of the bargain: no floats, no clock, no hash-map iteration,
//! fixed-width integers in everything it keeps, as in the core (docs/determinism.md).

mod unit_grid;

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::OnceLock;

use pathing::{Fixed, WorldPos};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::command::{Command, CommandKind, Event, RejectReason};
use crate::digest_tree::{Digest, DigestReport, RangeDigests, range_digest_from, range_hasher, range_indices};
use crate::ids::{EntityId, PlayerId};
use crate::snapshot::GameSnapshot;
use crate::unit::Unit;
use crate::world::World;
use pathing::ObstructionId;
use unit_grid::UnitGrid;

/// What a game may keep in the world or send through it: plain serde data, compared and cloned.
pub trait GameData: Clone + Debug + Eq + Serialize + DeserializeOwned + Send + Sync + 'static {}

impl<T> GameData for T where T: Clone + Debug + Eq + Serialize + DeserializeOwned + Send + Sync + 'static {}

/// A game's rules: its state types and the three places it runs.
///
/// Every method must be a pure function of its arguments (the world, the game's state, the
/// command): the same on every peer, every run and every thread count.
pub trait Rules: Clone + Debug + Send + Sync + 'static {
    /// The ruleset's name: 1 to 32 bytes of `a-z`, `0-9`, `-` and `_`. It names the digest
    /// components (`NAME.units`, …) and is written in snapshots and replays.
    const NAME: &'static str;
    /// The ruleset's version; a snapshot of another version is refused.
    const VERSION: u32;
    /// Per-unit state, made by [`Rules::new_unit`] for every unit the world creates.
    type Unit: GameData;
    /// Per-obstruction state: what the game keeps of a building, a tree or any other obstruction
    /// (hit points, wood), set and removed by the game itself ([`Ctx::set_object`]).
    type Object: GameData;
    /// Per-player state (player 0 is the world itself).
    type Player: GameData + Default;
    /// The game's world-wide state.
    type State: GameData + Default;
    /// The game's commands ([`command`] makes a [`CommandKind`] of one).
    type Command: GameData;
    /// What the game reports ([`events`] reads them from a turn's events).
    type Event: GameData;
    /// Why the game refuses a command ([`reject`] reads it from a rejection).
    type Reject: GameData;

    /// The game's state for a unit the world just created (by a command, an action or a waiting
    /// building spawn). It runs before the next game code that could see the unit; a game that
    /// wants to know more (which building trained it) sets it in [`Rules::step`] from the turn's
    /// `Spawned` / `SpawnedFromQueue` events.
    fn new_unit(&self, state: &Self::State, unit: &Unit) -> Self::Unit;

    /// Whether `player` may give `command` now. Must not depend on anything but the view.
    ///
    /// # Errors
    /// The reason, reported as [`RejectReason::Game`]; the command then changes nothing.
    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &Self::Command) -> Result<(), Self::Reject>;

    /// Whether `player` may send a core command (not a game command) in this game: a game whose
    /// units are trained, not spawned, refuses its players' `Spawn`, say. Runs before the core's
    /// own checks; a refusal is [`RejectReason::Game`] and the command changes nothing. The
    /// rules' own actions ([`Ctx::act`]) are never asked. By default every core command is allowed.
    ///
    /// # Errors
    /// The reason, reported as [`RejectReason::Game`].
    fn allow(&self, view: &View<'_, Self>, player: PlayerId, command: &CommandKind) -> Result<(), Self::Reject> {
        let _ = (view, player, command);
        Ok(())
    }

    /// Carries out a command [`Rules::check`] accepted.
    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &Self::Command);

    /// The game's turn, after the units moved and the formations planned, before the digest.
    /// `events` are the turn's events so far (commands, spawns, arrivals, …), those of the modules
    /// that stepped before this one included.
    fn step(&self, ctx: &mut Ctx<'_, Self>, events: &[Event]);

    /// Another module of the world has given `units` a task of its own ([`Ctx::interrupt`]): a
    /// module whose units do one thing at a time drops its task for them here (a worker ordered
    /// to fight stops gathering). By default nothing happens.
    fn interrupted(&self, ctx: &mut Ctx<'_, Self>, units: &[EntityId]) {
        let _ = (ctx, units);
    }
}

/// Largest obstruction id a game can keep state of ([`Ctx::set_object`]): the object digest
/// tree holds ranges of 64 ids below 2^26.
pub const MAX_OBJECT_ID: u32 = (1 << 26) - 1;

/// Largest encoded game command. `[Units: bytes]`
pub const MAX_GAME_COMMAND: usize = 4096;

/// Largest encoded game state value in a snapshot (one unit's, one player's, or the world's).
/// `[Units: bytes]`
pub const MAX_GAME_VALUE: usize = 1 << 20;

/// The `seq` of the first action of a turn ([`Ctx::act`]); each next action counts up. Commands
/// players send use lower numbers, so an action never takes a command's place in the order.
pub const ACTION_SEQ_BASE: u32 = 1 << 31;

/// A game command as a core command kind.
pub fn command<R: Rules>(command: &R::Command) -> CommandKind {
    CommandKind::Game { rules: R::NAME.to_owned(), payload: crate::state_hash::encode(command) }
}

/// The events of rule module `R` among a turn's events, in order (other modules' events, and
/// events that do not decode as `R::Event`, are skipped).
pub fn events<R: Rules>(events: &[Event]) -> impl Iterator<Item = R::Event> + '_ {
    events.iter().filter_map(|e| match e {
        Event::Game { rules, payload } if rules == R::NAME => decode::<R::Event>(payload, MAX_GAME_VALUE).ok(),
        _ => None,
    })
}

/// Rule module `R`'s reason, when a rejection is that module's.
pub fn reject<R: Rules>(reason: &RejectReason) -> Option<R::Reject> {
    match reason {
        RejectReason::Game { rules, payload } if rules == R::NAME => decode::<R::Reject>(payload, MAX_GAME_VALUE).ok(),
        _ => None,
    }
}

/// Decodes canonical bytes ([`crate::state_hash::CONFIG`]) of at most `limit` bytes, all of them.
///
/// # Errors
/// [`crate::Error::GameValue`], saying what did not fit.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, crate::Error> {
    decode_text(bytes, limit).map_err(|message| crate::Error::GameValue { message })
}

/// [`decode`], its text alone.
fn decode_text<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, String> {
    if bytes.len() > limit {
        return Err(format!("{} bytes, more than the limit {limit}", bytes.len()));
    }
    let config = crate::state_hash::CONFIG.with_limit::<MAX_GAME_VALUE>();
    let (value, used): (T, usize) = bincode::serde::decode_from_slice(bytes, config).map_err(|e| e.to_string())?;
    if used != bytes.len() {
        return Err(format!("{} bytes after the value", bytes.len() - used));
    }
    Ok(value)
}

/// Whether a ruleset name is usable (see [`Rules::NAME`]).
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// A snapshot's game values decoded as `R`'s types.
///
/// # Errors
/// [`crate::Error::GameValue`], naming the value that is not `R`'s, or another module's name or
/// version.
pub fn decode_snapshot<R: Rules>(snapshot: &GameSnapshot) -> Result<GameValues<R>, crate::Error> {
    decode_section::<R>(snapshot).map_err(|message| crate::Error::GameValue { message })
}

/// [`decode_snapshot`], its text alone.
fn decode_section<R: Rules>(snapshot: &GameSnapshot) -> Result<GameValues<R>, String> {
    if snapshot.rules != R::NAME || snapshot.version != R::VERSION {
        return Err(format!(
            "the game state is of ruleset {} version {}, not {} version {}",
            snapshot.rules,
            snapshot.version,
            R::NAME,
            R::VERSION
        ));
    }
    let mut units = Vec::with_capacity(snapshot.units.len());
    for (id, bytes) in &snapshot.units {
        units.push((*id, decode(bytes, MAX_GAME_VALUE).map_err(|e| format!("{}.units {id}: {e}", R::NAME))?));
    }
    let mut objects = Vec::with_capacity(snapshot.objects.len());
    for (id, bytes) in &snapshot.objects {
        objects.push((*id, decode(bytes, MAX_GAME_VALUE).map_err(|e| format!("{}.objects {id}: {e}", R::NAME))?));
    }
    let mut players = Vec::with_capacity(snapshot.players.len());
    for (p, bytes) in snapshot.players.iter().enumerate() {
        players.push(decode(bytes, MAX_GAME_VALUE).map_err(|e| format!("{}.players {p}: {e}", R::NAME))?);
    }
    let state = decode(&snapshot.state, MAX_GAME_VALUE).map_err(|e| format!("{}.world: {e}", R::NAME))?;
    Ok(GameValues { units, objects, players, state })
}

/// A game's state as a snapshot holds it, decoded ([`decode_snapshot`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameValues<R: Rules> {
    /// Every live unit's state, by id.
    pub units: Vec<(EntityId, R::Unit)>,
    /// Every object's state, by obstruction id.
    pub objects: Vec<(ObstructionId, R::Object)>,
    /// Every player's state, player 0 first.
    pub players: Vec<R::Player>,
    /// The world state.
    pub state: R::State,
}

/// The game's state in the world, with the digests of it.
#[derive(Clone, Debug)]
pub(crate) struct GameState<R: Rules> {
    rules: R,
    /// Per entity slot: the unit's id and its game state.
    units: Vec<Option<(EntityId, R::Unit)>>,
    /// Per player, player 0 first.
    players: Vec<R::Player>,
    state: R::State,
    unit_digests: RangeDigests,
    /// Per entity slot, the canonical bytes of `(id, state)` last hashed (empty: no unit), so a
    /// range is hashed again only when a unit's bytes really changed, and only the units written
    /// since are encoded again.
    unit_bytes: Vec<Vec<u8>>,
    /// The slots written (or created, or emptied) since the last digest, each once.
    touched: SlotNotes,
    /// The components' names and the range hashers, made once.
    names: Names,
    /// A buffer the digests reuse.
    scratch: Vec<u8>,
    /// The game's state of obstructions, by id (each below [`MAX_OBJECT_ID`]).
    objects: BTreeMap<ObstructionId, R::Object>,
    /// Digests of `objects` in ranges of 64 obstruction ids, as `unit_digests` of entity slots.
    object_digests: RangeDigests,
    /// Per object, its canonical bytes last hashed, as `unit_bytes` of units.
    object_bytes: BTreeMap<ObstructionId, Vec<u8>>,
    /// The objects written, set or removed since the last digest (repeats allowed).
    objects_touched: Vec<ObstructionId>,
    players_digest: Digest,
    state_digest: Digest,
    players_dirty: bool,
    state_dirty: bool,
    /// The world's [`World::id_epoch`] when the units were last synced (`None`: never).
    synced_ids: Option<u64>,
    /// The spatial index of [`View`]'s queries while the game runs (derived, never hashed or
    /// saved): dropped whenever the world hands the game the turn (units may have moved since),
    /// built at the first query, and told of the units `Ctx::act` creates.
    index: OnceLock<UnitGrid>,
}

impl<R: Rules> GameState<R> {
    pub(crate) fn new(rules: R, players: u8) -> Self {
        Self {
            rules,
            units: Vec::new(),
            players: vec![R::Player::default(); usize::from(players) + 1],
            state: R::State::default(),
            unit_digests: RangeDigests::new(component(R::NAME, "units")),
            unit_bytes: Vec::new(),
            touched: SlotNotes::default(),
            names: Names::new(R::NAME),
            scratch: Vec::new(),
            objects: BTreeMap::new(),
            object_digests: RangeDigests::new(component(R::NAME, "objects")),
            object_bytes: BTreeMap::new(),
            objects_touched: Vec::new(),
            players_digest: [0; 32],
            state_digest: [0; 32],
            players_dirty: true,
            state_dirty: true,
            synced_ids: None,
            index: OnceLock::new(),
        }
    }

    /// The game state of a snapshot, checked against the world it is loaded into.
    pub(crate) fn restore(rules: R, world: &World, snapshot: &GameSnapshot) -> Result<Self, String> {
        let GameValues { units, objects, players, state } = decode_section::<R>(snapshot)?;
        let expected = usize::from(world.settings().players) + 1;
        if players.len() != expected {
            return Err(format!("{}.players: {} players, the world has {expected} (with player 0)", R::NAME, players.len()));
        }
        let mut game = Self::new(rules, world.settings().players);
        game.players = players;
        game.state = state;
        for (id, object) in objects {
            if id.0 > MAX_OBJECT_ID {
                return Err(format!("{}.objects {id}: above the largest object id {MAX_OBJECT_ID}", R::NAME));
            }
            if game.objects.insert(id, object).is_some() {
                return Err(format!("{}.objects {id}: stored twice", R::NAME));
            }
            game.objects_touched.push(id);
        }
        game.mark_every_slot(world.unit_slots().len());
        game.synced_ids = Some(world.id_epoch());
        for (id, unit) in units {
            let slot = game.units.get_mut(id.index as usize).filter(|_| world.unit(id).is_some());
            let Some(slot) = slot else { return Err(format!("{}.units {id}: no such unit in the world", R::NAME)) };
            if slot.is_some() {
                return Err(format!("{}.units {id}: stored twice", R::NAME));
            }
            *slot = Some((id, unit));
        }
        if let Some(unit) = world.units().find(|u| game.unit(u.id).is_none()) {
            return Err(format!("{}.units: unit {} has no game state", R::NAME, unit.id));
        }
        Ok(game)
    }

    pub(crate) fn player_mut(&mut self, player: PlayerId) -> Option<&mut R::Player> {
        let p = self.players.get_mut(usize::from(player.0))?;
        self.players_dirty = true;
        Some(p)
    }

    /// Marks every entity slot's range, as a world that was never saved would have set them all.
    fn mark_every_slot(&mut self, slots: usize) {
        if self.units.len() < slots {
            let from = self.units.len();
            self.units.resize(slots, None);
            self.unit_bytes.resize(slots, Vec::new());
            for slot in from..slots {
                self.touched.mark(slot);
                // A range never hashed gets its digest even if all its slots stay empty.
                self.unit_digests.mark(slot as u32);
            }
        }
    }

    /// Notes an object written, set or removed, for the next digest.
    fn touch_object(&mut self, id: ObstructionId) {
        if self.objects_touched.last() != Some(&id) {
            self.objects_touched.push(id);
        }
    }

    fn unit(&self, id: EntityId) -> Option<&R::Unit> {
        self.units.get(id.index as usize).and_then(Option::as_ref).filter(|(u, _)| *u == id).map(|(_, s)| s)
    }

    pub(crate) fn unit_mut(&mut self, id: EntityId) -> Option<&mut R::Unit> {
        let state = self.units.get_mut(id.index as usize).and_then(Option::as_mut).filter(|(u, _)| *u == id).map(|(_, s)| s)?;
        self.touched.mark(id.index as usize);
        Some(state)
    }
}

/// A game's component names (`NAME.units`, …) and the hashers of its two range trees.
#[derive(Clone, Debug)]
struct Names {
    units: String,
    objects: String,
    players: String,
    world: String,
    unit_ranges: blake3::Hasher,
    object_ranges: blake3::Hasher,
    /// The hashers of `players` and `world`.
    players_hasher: blake3::Hasher,
    world_hasher: blake3::Hasher,
}

impl Names {
    fn new(rules: &str) -> Self {
        let name = |part: &str| format!("{rules}.{part}");
        Self {
            unit_ranges: range_hasher(&name("units")),
            object_ranges: range_hasher(&name("objects")),
            players_hasher: crate::state_hash::component_hasher(&name("players")),
            world_hasher: crate::state_hash::component_hasher(&name("world")),
            units: name("units"),
            objects: name("objects"),
            players: name("players"),
            world: name("world"),
        }
    }
}

/// Why [`Ctx::set_object`] keeps nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectRefusal {
    /// No obstruction has this id now.
    NoObstruction(ObstructionId),
    /// The id is above [`MAX_OBJECT_ID`].
    IdTooLarge(ObstructionId),
}

impl std::fmt::Display for ObjectRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoObstruction(id) => write!(f, "no obstruction {id}"),
            Self::IdTooLarge(id) => write!(f, "obstruction {id} is above the largest object id {MAX_OBJECT_ID}"),
        }
    }
}

impl std::error::Error for ObjectRefusal {}

/// Slots noted once each, in noting order.
#[derive(Clone, Debug, Default)]
struct SlotNotes {
    noted: Vec<bool>,
    list: Vec<usize>,
}

impl SlotNotes {
    fn mark(&mut self, slot: usize) {
        if self.noted.len() <= slot {
            self.noted.resize(slot + 1, false);
        }
        if !std::mem::replace(&mut self.noted[slot], true) {
            self.list.push(slot);
        }
    }

    fn take(&mut self) -> Vec<usize> {
        for &slot in &self.list {
            self.noted[slot] = false;
        }
        std::mem::take(&mut self.list)
    }
}

/// The digest component name `RULES.PART`.
fn component(rules: &str, part: &str) -> std::borrow::Cow<'static, str> {
    std::borrow::Cow::Owned(format!("{rules}.{part}"))
}

/// The world's handle on its game, whatever the ruleset (the world keeps it boxed).
pub(crate) trait DynGame: Debug + Send + Sync {
    fn name(&self) -> &'static str;
    fn version(&self) -> u32;
    /// Gives every unit the world has and the game has not its game state, and drops the state of
    /// units the world no longer has.
    fn sync_units(&mut self, world: &World);
    fn command(&mut self, world: &mut World, player: PlayerId, payload: &[u8], events: &mut Vec<Event>) -> Result<(), RejectReason>;
    /// [`Rules::allow`] for a core command.
    fn allow(&self, world: &World, player: PlayerId, command: &CommandKind) -> Result<(), RejectReason>;
    fn step(&mut self, world: &mut World, events: &mut Vec<Event>);
    /// [`Rules::interrupted`].
    fn interrupted(&mut self, world: &mut World, units: &[EntityId], events: &mut Vec<Event>);
    /// Brings the digests up to date and returns the components, in order.
    fn components(&mut self) -> Vec<(String, Digest)>;
    /// The reports of the units' and the objects' range trees.
    fn reports(&self) -> Vec<DigestReport>;
    fn save(&self) -> GameSnapshot;
    /// A copy whose digests are all to be computed afresh (the from-scratch oracle).
    fn fresh(&self) -> Box<dyn DynGame>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<R: Rules> DynGame for GameState<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn version(&self) -> u32 {
        R::VERSION
    }

    fn sync_units(&mut self, world: &World) {
        // Units are created and removed only with their ids: unchanged ids, nothing to do.
        let ids = world.id_epoch();
        if self.synced_ids == Some(ids) {
            return;
        }
        self.synced_ids = Some(ids);
        let slots = world.unit_slots();
        // Every slot the world has is covered by a range digest, even one whose unit came and
        // went between two syncs, as a loaded world's are (`mark_every_slot`).
        self.mark_every_slot(slots.len());
        for (slot, game) in self.units.iter_mut().enumerate() {
            let unit = slots.get(slot).and_then(Option::as_ref);
            match (unit, &game) {
                (Some(u), Some((id, _))) if *id == u.id => {}
                (Some(u), _) => {
                    *game = Some((u.id, self.rules.new_unit(&self.state, u)));
                    self.touched.mark(slot);
                    // A removed unit needs nothing: queries skip the ids the world lost.
                    if let Some(index) = self.index.get_mut()
                        && !index.add(u.id, u.pos)
                    {
                        self.index = OnceLock::new();
                    }
                }
                (None, Some(_)) => {
                    *game = None;
                    self.touched.mark(slot);
                }
                (None, None) => {}
            }
        }
    }

    fn command(&mut self, world: &mut World, player: PlayerId, payload: &[u8], events: &mut Vec<Event>) -> Result<(), RejectReason> {
        let command: R::Command = decode(payload, MAX_GAME_COMMAND).map_err(|_| RejectReason::GameMalformed)?;
        let rules = self.rules.clone();
        self.index = OnceLock::new();
        rules
            .check(&View::new(world, self), player, &command)
            .map_err(|r| RejectReason::Game { rules: R::NAME.to_owned(), payload: crate::state_hash::encode(&r) })?;
        let mut ctx = Ctx::new(world, self, events);
        rules.apply(&mut ctx, player, &command);
        Ok(())
    }

    fn allow(&self, world: &World, player: PlayerId, command: &CommandKind) -> Result<(), RejectReason> {
        self.rules
            .allow(&View::apart(world, self), player, command)
            .map_err(|r| RejectReason::Game { rules: R::NAME.to_owned(), payload: crate::state_hash::encode(&r) })
    }

    fn step(&mut self, world: &mut World, events: &mut Vec<Event>) {
        let rules = self.rules.clone();
        self.index = OnceLock::new();
        // The rules read the turn's events so far while theirs collect apart, then join them:
        // no copy of the turn's events.
        let so_far = std::mem::take(events);
        let mut ctx = Ctx::new(world, self, events);
        rules.step(&mut ctx, &so_far);
        let theirs = std::mem::replace(events, so_far);
        events.extend(theirs);
    }

    fn interrupted(&mut self, world: &mut World, units: &[EntityId], events: &mut Vec<Event>) {
        let rules = self.rules.clone();
        self.index = OnceLock::new();
        let mut ctx = Ctx::new(world, self, events);
        rules.interrupted(&mut ctx, units);
    }

    fn components(&mut self) -> Vec<(String, Digest)> {
        use crate::state_hash::{compact_digest_from, encode_compact_into_vec};
        let mut bytes = std::mem::take(&mut self.scratch);
        for slot in self.touched.take() {
            bytes.clear();
            if let Some(unit) = self.units.get(slot).and_then(Option::as_ref) {
                encode_compact_into_vec(unit, &mut bytes);
            }
            if let Some(cached) = self.unit_bytes.get_mut(slot)
                && *cached != bytes
            {
                // The kept buffer becomes the scratch one: no copy.
                std::mem::swap(cached, &mut bytes);
                self.unit_digests.mark(slot as u32);
            }
        }
        for range in self.unit_digests.take_dirty() {
            // The bytes the compact encoding of the list of the range's `(id, state)` gives: the
            // count, then each entry's bytes (`state_hash::a_list_encodes_as_its_count_then_each_entry`).
            let Some(slots) = range_indices(range) else { continue };
            // A range holds at most 64 units, so its count is one byte in the compact form:
            // written after the entries, in one pass.
            const _: () = assert!(crate::digest_tree::RANGE_SIZE <= 250, "a range's count must be one compact byte");
            bytes.clear();
            bytes.push(0);
            let mut count = 0u8;
            for b in slots.filter_map(|i| self.unit_bytes.get(i as usize).filter(|b| !b.is_empty())) {
                bytes.extend_from_slice(b);
                count += 1;
            }
            bytes[0] = count;
            let digest = range_digest_from(&self.names.unit_ranges, range, &bytes);
            self.unit_digests.set_range(range, digest);
        }
        let mut ids = std::mem::take(&mut self.objects_touched);
        ids.sort_unstable();
        ids.dedup();
        for id in ids.drain(..) {
            bytes.clear();
            let changed = match self.objects.get(&id) {
                Some(object) => {
                    encode_compact_into_vec(object, &mut bytes);
                    match self.object_bytes.entry(id) {
                        std::collections::btree_map::Entry::Vacant(e) => {
                            e.insert(bytes.clone());
                            true
                        }
                        std::collections::btree_map::Entry::Occupied(mut e) => {
                            let kept = e.get_mut();
                            let changed = *kept != bytes;
                            if changed {
                                kept.clear();
                                kept.extend_from_slice(&bytes);
                            }
                            changed
                        }
                    }
                }
                None => self.object_bytes.remove(&id).is_some(),
            };
            if changed {
                self.object_digests.mark(id.0);
            }
        }
        self.objects_touched = ids;
        for range in self.object_digests.take_dirty() {
            // The compact encoding of the range's list of `(id, object)`, from the kept bytes, as
            // for units.
            let Some(ids) = range_indices(range) else { continue };
            let entries = self.object_bytes.range(ObstructionId(*ids.start())..=ObstructionId(*ids.end()));
            if entries.clone().next().is_none() {
                // A range left empty reads as one never hashed, as in a world loaded or made
                // afresh from the same state, whose tree holds only the ranges of its objects.
                self.object_digests.set_range(range, [0; 32]);
                continue;
            }
            bytes.clear();
            encode_compact_into_vec(&(entries.clone().count() as u64), &mut bytes);
            for (id, kept) in entries {
                encode_compact_into_vec(id, &mut bytes);
                bytes.extend_from_slice(kept);
            }
            let digest = range_digest_from(&self.names.object_ranges, range, &bytes);
            self.object_digests.set_range(range, digest);
        }
        // The tree ends at the range of the highest object there is, whatever there was before:
        // the digest is the state's, not its history's.
        let ranges = self.object_bytes.keys().next_back().map_or(0, |id| crate::digest_tree::range_of(id.0) + 1);
        self.object_digests.resize(ranges);
        self.scratch = bytes;
        if std::mem::take(&mut self.players_dirty) {
            self.players_digest = compact_digest_from(&self.names.players_hasher, &self.players);
        }
        if std::mem::take(&mut self.state_dirty) {
            self.state_digest = compact_digest_from(&self.names.world_hasher, &(R::NAME, R::VERSION, &self.state));
        }
        vec![
            (self.names.units.clone(), self.unit_digests.root()),
            (self.names.objects.clone(), self.object_digests.root()),
            (self.names.players.clone(), self.players_digest),
            (self.names.world.clone(), self.state_digest),
        ]
    }

    fn reports(&self) -> Vec<DigestReport> {
        vec![self.unit_digests.tree().report(), self.object_digests.tree().report()]
    }

    fn save(&self) -> GameSnapshot {
        use crate::state_hash::encode;
        GameSnapshot {
            rules: R::NAME.to_owned(),
            version: R::VERSION,
            units: self.units.iter().flatten().map(|(id, u)| (*id, encode(u))).collect(),
            objects: self.objects.iter().map(|(id, o)| (*id, encode(o))).collect(),
            players: self.players.iter().map(encode::<R::Player>).collect(),
            state: encode(&self.state),
        }
    }

    fn fresh(&self) -> Box<dyn DynGame> {
        let mut copy = Self::new(self.rules.clone(), 0);
        copy.mark_every_slot(self.units.len());
        copy.units = self.units.clone();
        copy.players = self.players.clone();
        copy.state = self.state.clone();
        copy.objects = self.objects.clone();
        copy.objects_touched = copy.objects.keys().copied().collect();
        // Never synced with the fresh world, whose id epoch starts again at 0.
        copy.synced_ids = None;
        Box::new(copy)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Read access to the world and the game's state, as [`Rules::check`] and games' tools see them.
pub struct View<'a, R: Rules> {
    world: &'a World,
    game: &'a GameState<R>,
    index: Index<'a>,
}

/// Where a [`View`] finds its spatial index.
enum Index<'a> {
    /// The game's, while the game runs ([`Rules::check`], [`Rules::apply`], [`Rules::step`]).
    Game(&'a OnceLock<UnitGrid>),
    /// Its own, built at its first query: a view from outside the game's turn ([`World::game`],
    /// [`Rules::allow`]) cannot tell whether the units moved since the game's was built.
    Own(OnceLock<UnitGrid>),
}

impl<'a, R: Rules> View<'a, R> {
    /// A view while the game runs, sharing the game's index.
    fn new(world: &'a World, game: &'a GameState<R>) -> Self {
        Self { world, game, index: Index::Game(&game.index) }
    }

    /// A view with an index of its own.
    fn apart(world: &'a World, game: &'a GameState<R>) -> Self {
        Self { world, game, index: Index::Own(OnceLock::new()) }
    }

    pub(crate) fn of(world: &'a World, game: &'a dyn DynGame) -> Option<Self> {
        Some(Self::apart(world, game.as_any().downcast_ref::<GameState<R>>()?))
    }

    /// The spatial index, built now if it is not yet.
    fn index(&self) -> &UnitGrid {
        let cell = match &self.index {
            Index::Game(cell) => cell,
            Index::Own(cell) => cell,
        };
        cell.get_or_init(|| UnitGrid::build(self.world.units().map(|u| (u.id, u.pos))))
    }

    /// A live unit with its game state.
    fn resolve(&self, id: EntityId) -> Option<(&'a Unit, &'a R::Unit)> {
        Some((self.world.unit(id)?, self.game.unit(id)?))
    }

    /// The world: units, obstructions, passability, settings, the turn.
    pub fn world(&self) -> &'a World {
        self.world
    }

    /// The rules.
    pub fn rules(&self) -> &'a R {
        &self.game.rules
    }

    /// A live unit's game state.
    pub fn unit(&self, id: EntityId) -> Option<&'a R::Unit> {
        self.game.unit(id)
    }

    /// Every live unit with its game state, by id.
    pub fn units(&self) -> impl Iterator<Item = (&'a Unit, &'a R::Unit)> + 'a {
        let game = self.game;
        self.world.units().filter_map(move |u| game.unit(u.id).map(|s| (u, s)))
    }

    /// The game's state of an obstruction.
    pub fn object(&self, id: ObstructionId) -> Option<&'a R::Object> {
        self.game.objects.get(&id)
    }

    /// Every object the game keeps, by ascending obstruction id.
    pub fn objects(&self) -> impl Iterator<Item = (ObstructionId, &'a R::Object)> + 'a {
        self.game.objects.iter().map(|(&id, o)| (id, o))
    }

    /// [`View::object`] as a function that outlives the view (to look objects up inside an
    /// iterator the view returns).
    pub fn object_lookup(&self) -> impl Fn(ObstructionId) -> Option<&'a R::Object> + Copy + 'a {
        let game = self.game;
        move |id| game.objects.get(&id)
    }

    /// A player's game state (player 0 is the world).
    pub fn player(&self, player: PlayerId) -> Option<&'a R::Player> {
        self.game.players.get(usize::from(player.0))
    }

    /// The game's world state.
    pub fn state(&self) -> &'a R::State {
        &self.game.state
    }

    /// The live units whose centres are within `radius` of `centre` (the boundary included;
    /// a negative radius counts as its magnitude) and that `keep` accepts, nearest first, ties by
    /// id: a total order.
    ///
    /// A spatial index finds them: the cost goes with the units near `centre`, not with all
    /// of them. `keep` is asked only about units within the radius, in no particular order, so it
    /// must be a pure test.
    pub fn units_within(&self, centre: WorldPos, radius: Fixed, keep: impl Fn(&Unit, &R::Unit) -> bool) -> Vec<EntityId> {
        let radius = i128::from(radius.to_bits()).abs();
        let mut found: Vec<(i128, EntityId)> = Vec::new();
        self.index().for_each_within(centre, radius, |id, d2| {
            if self.resolve(id).is_some_and(|(u, s)| keep(u, s)) {
                found.push((d2, id));
            }
        });
        found.sort_unstable();
        found.into_iter().map(|(_, id)| id).collect()
    }

    /// The nearest live unit within `radius` of `centre` that `keep` accepts (ties by id; the
    /// boundary included; a negative radius counts as its magnitude).
    ///
    /// A spatial index finds it, searching outward from `centre`: with a radius as large as the
    /// map it costs no more than looking at every unit. `keep` is asked only about units within
    /// the radius, in no particular order, so it must be a pure test.
    pub fn nearest(&self, centre: WorldPos, radius: Fixed, keep: impl Fn(&Unit, &R::Unit) -> bool) -> Option<EntityId> {
        let radius = i128::from(radius.to_bits()).abs();
        let accept = |id| self.resolve(id).is_some_and(|(u, s)| keep(u, s));
        self.index().nearest(centre, radius, accept).map(|(_, id)| id)
    }

    /// [`View::units_within`] by looking at every unit: the oracle the index is tested against.
    #[cfg(any(test, feature = "test-support"))]
    pub fn units_within_scan(&self, centre: WorldPos, radius: Fixed, keep: impl Fn(&Unit, &R::Unit) -> bool) -> Vec<EntityId> {
        let r = i128::from(radius.to_bits());
        let mut found: Vec<(i128, EntityId)> = self
            .units()
            .filter(|(u, s)| keep(u, s))
            .filter_map(|(u, _)| {
                let d2 = distance2(centre, u.pos);
                (d2 <= r * r).then_some((d2, u.id))
            })
            .collect();
        found.sort_unstable();
        found.into_iter().map(|(_, id)| id).collect()
    }

    /// [`View::nearest`] by looking at every unit: the oracle the index is tested against.
    #[cfg(any(test, feature = "test-support"))]
    pub fn nearest_scan(&self, centre: WorldPos, radius: Fixed, keep: impl Fn(&Unit, &R::Unit) -> bool) -> Option<EntityId> {
        let r = i128::from(radius.to_bits());
        self.units()
            .filter(|(u, s)| keep(u, s))
            .map(|(u, _)| (distance2(centre, u.pos), u.id))
            .filter(|&(d2, _)| d2 <= r * r)
            .min()
            .map(|(_, id)| id)
    }
}

/// The squared distance between two points in raw fixed-point units (exact, in `i128`).
pub fn distance2(a: WorldPos, b: WorldPos) -> i128 {
    let (dx, dz) = (i128::from(a.x.to_bits()) - i128::from(b.x.to_bits()), i128::from(a.z.to_bits()) - i128::from(b.z.to_bits()));
    dx * dx + dz * dz
}

/// What the game's code holds while it runs: the world to read and act on, and its own state to
/// change. Every change to the game's state goes through here and marks its digest.
pub struct Ctx<'a, R: Rules> {
    world: &'a mut World,
    game: &'a mut GameState<R>,
    events: &'a mut Vec<Event>,
}

impl<'a, R: Rules> Ctx<'a, R> {
    fn new(world: &'a mut World, game: &'a mut GameState<R>, events: &'a mut Vec<Event>) -> Self {
        Self { world, game, events }
    }

    /// Read access to everything ([`View`]).
    pub fn view(&self) -> View<'_, R> {
        View::new(self.world, self.game)
    }

    /// The world.
    pub fn world(&self) -> &World {
        self.world
    }

    /// The rules.
    pub fn rules(&self) -> &R {
        &self.game.rules
    }

    /// A live unit's game state.
    pub fn unit(&self, id: EntityId) -> Option<&R::Unit> {
        self.game.unit(id)
    }

    /// A live unit's game state, to change.
    pub fn unit_mut(&mut self, id: EntityId) -> Option<&mut R::Unit> {
        self.game.unit_mut(id)
    }

    /// The game's state of an obstruction.
    pub fn object(&self, id: ObstructionId) -> Option<&R::Object> {
        self.game.objects.get(&id)
    }

    /// The game's state of an obstruction, to change.
    pub fn object_mut(&mut self, id: ObstructionId) -> Option<&mut R::Object> {
        if !self.game.objects.contains_key(&id) {
            return None;
        }
        self.game.touch_object(id);
        self.game.objects.get_mut(&id)
    }

    /// Every object the game keeps, by ascending obstruction id.
    pub fn objects(&self) -> impl Iterator<Item = (ObstructionId, &R::Object)> + '_ {
        self.game.objects.iter().map(|(&id, o)| (id, o))
    }

    /// Keeps `object` as the game's state of the obstruction `id`, returning the one it replaces.
    /// The obstruction must exist now; the game removes the object when it is done with it
    /// ([`Ctx::remove_object`]), the world never does.
    ///
    /// # Errors
    /// [`ObjectRefusal`] when there is no such obstruction or its id is above [`MAX_OBJECT_ID`];
    /// nothing changes then.
    pub fn set_object(&mut self, id: ObstructionId, object: R::Object) -> Result<Option<R::Object>, ObjectRefusal> {
        if id.0 > MAX_OBJECT_ID {
            return Err(ObjectRefusal::IdTooLarge(id));
        }
        if !self.world.nav().obstructions().contains_key(&id) {
            return Err(ObjectRefusal::NoObstruction(id));
        }
        self.game.touch_object(id);
        Ok(self.game.objects.insert(id, object))
    }

    /// Drops the game's state of an obstruction (whether or not the obstruction still exists).
    pub fn remove_object(&mut self, id: ObstructionId) -> Option<R::Object> {
        let object = self.game.objects.remove(&id)?;
        self.game.touch_object(id);
        Some(object)
    }

    /// A player's game state (player 0 is the world).
    pub fn player(&self, player: PlayerId) -> Option<&R::Player> {
        self.game.players.get(usize::from(player.0))
    }

    /// A player's game state, to change.
    pub fn player_mut(&mut self, player: PlayerId) -> Option<&mut R::Player> {
        self.game.player_mut(player)
    }

    /// The game's world state.
    pub fn state(&self) -> &R::State {
        &self.game.state
    }

    /// The game's world state, to change.
    pub fn state_mut(&mut self) -> &mut R::State {
        self.game.state_dirty = true;
        &mut self.game.state
    }

    /// Reports a game event (it joins the turn's events as [`Event::Game`]).
    pub fn emit(&mut self, event: &R::Event) {
        self.events.push(Event::Game { rules: R::NAME.to_owned(), payload: crate::state_hash::encode(event) });
    }

    /// Runs `f` with a context of another rule module of the world, `O`, to read and change its
    /// state (a production module spending an economy module's wood); `None` when the world has
    /// no module `O` or `O` is the one running (or is running this one). `O` sees the units
    /// created so far; the events `O` emits join the turn's.
    pub fn with<O: Rules, T>(&mut self, f: impl FnOnce(&mut Ctx<'_, O>) -> T) -> Option<T> {
        let (slot, mut other) = self.world.take_module(std::any::TypeId::of::<GameState<O>>())?;
        other.sync_units(self.world);
        let result = other.as_any_mut().downcast_mut::<GameState<O>>().map(|state| {
            state.index = OnceLock::new();
            f(&mut Ctx::new(self.world, state, self.events))
        });
        other.sync_units(self.world);
        self.world.put_module(slot, other);
        // `O` may have created units: this module's state for them, now.
        self.game.sync_units(self.world);
        self.game.index = OnceLock::new();
        result
    }

    /// Tells every other rule module of the world that `units` now do this module's bidding
    /// ([`Rules::interrupted`], in module order): the way modules keep a unit doing one thing at
    /// a time without knowing each other.
    pub fn interrupt(&mut self, units: &[EntityId]) {
        for slot in 0..self.world.module_count() {
            let Some(mut other) = self.world.take_module_at(slot) else { continue };
            other.sync_units(self.world);
            other.interrupted(self.world, units, self.events);
            other.sync_units(self.world);
            self.world.put_module(slot, other);
        }
        self.game.sync_units(self.world);
        self.game.index = OnceLock::new();
    }

    /// Carries out a core command on behalf of `player` (player 0 is the world), with exactly the
    /// validation a command gets, now: its events join the turn's and are returned (the new
    /// units' ids are in them). Units it creates get their game state at once ([`Rules::new_unit`]).
    ///
    /// A grid change (an obstruction placed or removed, an area, the terrain) takes effect in
    /// the passability grids before the turn's digest; orders are planned in the next turn's path
    /// phase, like every order given after it.
    ///
    /// # Errors
    /// The reason the core refuses it (and it changed nothing); a game command is refused with
    /// [`RejectReason::NotAnAction`].
    pub fn act(&mut self, player: PlayerId, kind: CommandKind) -> Result<Vec<Event>, RejectReason> {
        if matches!(kind, CommandKind::Game { .. }) {
            return Err(RejectReason::NotAnAction);
        }
        let seq = self.world.next_action_seq();
        let moves = moves_units(&kind);
        let command = Command { turn: self.world.turn(), player, seq, kind };
        let start = self.events.len();
        let result = self.world.apply_action(&command, self.events);
        let new = self.events[start..].to_vec();
        // The index learns of created units here; removed ones it skips by id.
        self.game.sync_units(self.world);
        if moves {
            self.game.index = OnceLock::new();
        }
        result.map(|()| new)
    }
}

/// Whether a core command, applied as an action, may change a unit's position at once (not by
/// the order it gives, which motion carries out next turn): then the game's spatial index is
/// dropped. No command does today (dispersal from a new building gives orders); the match lists
/// every kind, so a new one cannot be added without deciding.
fn moves_units(kind: &CommandKind) -> bool {
    match kind {
        CommandKind::Spawn { .. }
        | CommandKind::SpawnFromBuilding { .. }
        | CommandKind::CancelSpawns { .. }
        | CommandKind::Move { .. }
        | CommandKind::Remove { .. }
        | CommandKind::Stop { .. }
        | CommandKind::PlaceObstruction { .. }
        | CommandKind::PlaceBuilding { .. }
        | CommandKind::SetObstructionFlags { .. }
        | CommandKind::RemoveObstruction { .. }
        | CommandKind::SetArea { .. }
        | CommandKind::EditTerrain { .. }
        | CommandKind::FormGroup { .. }
        | CommandKind::MoveFormation { .. }
        | CommandKind::SetLayout { .. }
        | CommandKind::Disband { .. }
        | CommandKind::SetWaypoints { .. }
        | CommandKind::SetWaypointPriorities { .. }
        | CommandKind::MoveByWaypoints { .. }
        | CommandKind::Game { .. } => false,
    }
}

/// One rule module's state inside a world, whatever its rules (made by [`Modules`]; opaque).
#[derive(Debug)]
pub struct Module(pub(crate) Box<dyn DynGame>);

/// Sees each rule module of a [`Modules`] list, by type, in step order ([`Modules::visit`]):
/// how a tool builds what it needs of every module (its JSON forms, say) without knowing them.
pub trait ModuleVisitor {
    /// Called once per module, in step order.
    fn module<R: Rules>(&mut self);
}

/// The rule modules of a world, in the order they step: one [`Rules`] type, or a tuple of up to
/// eight (`(Combat, Economy, Aura)`).
///
/// Each module keeps its own per-unit, per-object, per-player and world state, commands, events
/// and refusals, hashed as its own digest components (`combat.units`, …, in module order after
/// the core's) and saved as its own snapshot section. Once a turn the modules step in this
/// order, each seeing the events of the ones before it; a module reads another's state through
/// [`World::game`], changes it through [`Ctx::with`], and tells the others it has given units
/// a task of its own with [`Ctx::interrupt`] (docs/game-rules.md, "Rules compose").
pub trait Modules: Clone + Debug + Send + Sync + 'static {
    /// Each module's name and version, in step order.
    fn list() -> Vec<(&'static str, u32)>;
    /// Calls `visitor` for each module type, in step order.
    fn visit<V: ModuleVisitor>(visitor: &mut V);
    /// Each module's state for a new world of `players` players.
    #[doc(hidden)]
    fn start(self, players: u8) -> Vec<Module>;
    /// Each module's state from its snapshot section (`sections` in step order, already checked
    /// against [`Modules::list`]).
    #[doc(hidden)]
    fn restore(self, world: &World, sections: &[GameSnapshot]) -> Result<Vec<Module>, String>;
}

impl<R: Rules> Modules for R {
    fn list() -> Vec<(&'static str, u32)> {
        vec![(R::NAME, R::VERSION)]
    }

    fn visit<V: ModuleVisitor>(visitor: &mut V) {
        visitor.module::<R>();
    }

    fn start(self, players: u8) -> Vec<Module> {
        vec![Module(Box::new(GameState::new(self, players)))]
    }

    fn restore(self, world: &World, sections: &[GameSnapshot]) -> Result<Vec<Module>, String> {
        let [section] = sections else { return Err(format!("{} game sections, expected 1", sections.len())) };
        Ok(vec![Module(Box::new(GameState::restore(self, world, section)?))])
    }
}

macro_rules! tuple_modules {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Rules),+> Modules for ($($t,)+) {
            fn list() -> Vec<(&'static str, u32)> {
                vec![$(($t::NAME, $t::VERSION)),+]
            }

            fn visit<V: ModuleVisitor>(visitor: &mut V) {
                $(visitor.module::<$t>();)+
            }

            fn start(self, players: u8) -> Vec<Module> {
                vec![$(Module(Box::new(GameState::new(self.$i, players)))),+]
            }

            fn restore(self, world: &World, sections: &[GameSnapshot]) -> Result<Vec<Module>, String> {
                let expected = Self::list().len();
                if sections.len() != expected {
                    return Err(format!("{} game sections, expected {expected}", sections.len()));
                }
                Ok(vec![$(Module(Box::new(GameState::restore(self.$i, world, &sections[$i])?))),+])
            }
        }
    };
}

tuple_modules!(A 0);
tuple_modules!(A 0, B 1);
tuple_modules!(A 0, B 1, C 2);
tuple_modules!(A 0, B 1, C 2, D 3);
tuple_modules!(A 0, B 1, C 2, D 3, E 4);
tuple_modules!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_modules!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_modules!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Loads snapshots with a world's own modules ([`World::load_like`]).
pub(crate) trait Loader: Debug + Send + Sync {
    fn load(&self, bytes: &[u8]) -> Result<World, crate::snapshot::SnapshotError>;
}

/// A [`Loader`] of the modules `M`.
#[derive(Debug)]
pub(crate) struct LoaderOf<M>(pub(crate) M);

impl<M: Modules> Loader for LoaderOf<M> {
    fn load(&self, bytes: &[u8]) -> Result<World, crate::snapshot::SnapshotError> {
        World::load_with_rules(bytes, self.0.clone())
    }
}
