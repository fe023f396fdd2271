//! Game rulesets as the replay tools see them: by name, at run time.
//!
//! A replay or a scenario names its ruleset (`"rules": "skirmish"`); the tools build its worlds,
//! read its commands from scenario JSON, print its commands and events, and compare its state
//! field by field through a [`Ruleset`], found by name in a [`Rulesets`] registry. This crate knows
//! no particular game: the program that runs the tools (the `phalanx` command line) fills the
//! registry, and a game with its own rules adds its own ([`RulesOf`] wraps any `sim::rules::Rules`).

use std::sync::Arc;

use pathing::ObstructionId;
use pathing::passability::{Obstruction, WorldDesc};
use serde::Serialize;
use serde_json::Value;
use sim::rules::{MAX_GAME_COMMAND, MAX_GAME_VALUE, ModuleVisitor, Modules, Rules, decode, decode_snapshot};
use sim::snapshot::{GameSnapshot, SnapshotError};
use sim::{CommandKind, EntityId, PlayerId, Settings, SetupError, World};

use crate::Error;

/// One rule module's state in its serde form (`serde_json::Value`), for field-by-field comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct GameJson {
    /// The module's name.
    pub rules: String,
    /// Every live unit's state, by id.
    pub units: Vec<(EntityId, Value)>,
    /// Every object's state, by obstruction id.
    pub objects: Vec<(ObstructionId, Value)>,
    /// Every player's state, player 0 first.
    pub players: Vec<Value>,
    /// The world state.
    pub world: Value,
}

/// What the tools need of one game: its rule modules' JSON forms, worlds, bots and summary.
pub trait Ruleset: Send + Sync {
    /// The game's name, as scenarios (`"rules": "skirmish"`) and replay headers name it.
    fn name(&self) -> &'static str;
    /// The game's version.
    fn version(&self) -> u32;
    /// Each rule module's name and version, in step order (`sim::rules::Modules::list`).
    fn modules(&self) -> Vec<(&'static str, u32)>;
    /// A world at turn 0 with these rules.
    ///
    /// # Errors
    /// As `World::with_rules`.
    fn new_world(&self, desc: WorldDesc, obstructions: Vec<(ObstructionId, Obstruction)>, settings: Settings) -> Result<World, SetupError>;
    /// A world from snapshot bytes with these rules.
    ///
    /// # Errors
    /// As `World::load_with_rules`.
    fn load(&self, bytes: &[u8]) -> Result<World, SnapshotError>;
    /// A game command from its JSON form (as a scenario writes it) to its module and payload:
    /// `{"MODULE": COMMAND}`, or the command alone when exactly one module reads it.
    ///
    /// # Errors
    /// What serde says is wrong with it, that no module or more than one reads it, or that it is
    /// too long.
    fn command_from_json(&self, value: &Value) -> Result<(String, Vec<u8>), String>;
    /// A module's command payload in its JSON form; `None` when it does not decode.
    fn command_json(&self, rules: &str, payload: &[u8]) -> Option<Value>;
    /// A module's event payload in its JSON form; `None` when it does not decode.
    fn event_json(&self, rules: &str, payload: &[u8]) -> Option<Value>;
    /// A module's refusal payload in its JSON form; `None` when it does not decode.
    fn reject_json(&self, rules: &str, payload: &[u8]) -> Option<Value>;
    /// A snapshot's game section in serde form; `None` when no module of the game has its name.
    fn section_json(&self, section: &GameSnapshot) -> Option<Result<GameJson, String>>;
    /// One unit's state in each module, in serde form, from a live world (empty for a world of
    /// other rules or a unit it does not have).
    fn unit_json(&self, world: &World, unit: EntityId) -> Vec<(&'static str, Value)>;
    /// One player's state in each module, in serde form, from a live world (empty for a world
    /// of other rules or a player it does not have).
    fn player_json(&self, world: &World, player: sim::PlayerId) -> Vec<(&'static str, Value)>;
    /// A program playing `player`'s seat, deterministic from `seed`; `None` when the rules have
    /// no bots.
    fn bot(&self, player: PlayerId, seed: u64) -> Option<Box<dyn Bot>> {
        let _ = (player, seed);
        None
    }
    /// Lines summing up a game of these rules (scores, a winner), for `phalanx run` and the demo;
    /// none when the rules give none.
    fn summary(&self, world: &World) -> Vec<String> {
        let _ = world;
        Vec::new()
    }
}

/// A program playing one seat: each turn it reads the world (as its player may see it) and gives
/// its commands, like a player's client. Its commands are recorded in replays like anyone's, so a
/// replay verifies without it.
pub trait Bot: Send {
    /// The commands for the turn the world is at (their turn, player and seq are set by the
    /// caller).
    fn commands(&mut self, world: &World) -> Vec<CommandKind>;
}

impl std::fmt::Debug for dyn Bot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("bot")
    }
}

/// Makes a ruleset's bots ([`RulesOf::with_bots`]).
pub type BotMaker = fn(PlayerId, u64) -> Box<dyn Bot>;

/// A command as every tool prints it (`player 1 seq 6: …`), a game command in its module's JSON
/// form (`combat command {"Attack":{…}}`) when `rules` reads it, else as the core prints it.
pub fn command_text(command: &sim::Command, rules: Option<&dyn Ruleset>) -> String {
    match (&command.kind, rules) {
        (CommandKind::Game { rules: module, payload }, Some(r)) => match r.command_json(module, payload) {
            Some(json) => format!("player {} seq {}: {module} command {json}", command.player, command.seq),
            None => command.to_string(),
        },
        _ => command.to_string(),
    }
}

/// Why a command was refused, a module's reason in its JSON form when `rules` reads it.
pub fn reason_text(reason: &sim::RejectReason, rules: Option<&dyn Ruleset>) -> String {
    match (reason, rules) {
        (sim::RejectReason::Game { rules: module, payload }, Some(r)) => match r.reject_json(module, payload) {
            Some(json) => format!("refused by the {module} rules: {json}"),
            None => reason.to_string(),
        },
        _ => reason.to_string(),
    }
}

impl std::fmt::Debug for dyn Ruleset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ruleset {} version {}", self.name(), self.version())
    }
}

/// What the tools need of one rule module, whatever its types.
trait ModuleCodec: Send + Sync {
    fn name(&self) -> &'static str;
    fn command_from_json(&self, value: &Value) -> Result<Vec<u8>, String>;
    fn command_json(&self, payload: &[u8]) -> Option<Value>;
    fn event_json(&self, payload: &[u8]) -> Option<Value>;
    fn reject_json(&self, payload: &[u8]) -> Option<Value>;
    fn section_json(&self, section: &GameSnapshot) -> Result<GameJson, String>;
    fn unit_json(&self, world: &World, unit: EntityId) -> Option<Value>;
    fn player_json(&self, world: &World, player: sim::PlayerId) -> Option<Value>;
}

/// The [`ModuleCodec`] of module `R`.
struct CodecOf<R>(std::marker::PhantomData<fn() -> R>);

fn json<T: Serialize>(value: &T) -> Value {
    // Plain serde data (no maps with non-string keys) always has a JSON form.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl<R: Rules> ModuleCodec for CodecOf<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn command_from_json(&self, value: &Value) -> Result<Vec<u8>, String> {
        let command: R::Command = serde_json::from_value(value.clone()).map_err(|e| format!("not a {} command: {e}", R::NAME))?;
        let payload = sim::state_hash::encode(&command);
        if payload.len() > MAX_GAME_COMMAND {
            return Err(format!("a {} command of {} bytes, more than {MAX_GAME_COMMAND}", R::NAME, payload.len()));
        }
        Ok(payload)
    }

    fn command_json(&self, payload: &[u8]) -> Option<Value> {
        decode::<R::Command>(payload, MAX_GAME_COMMAND).ok().map(|c| json(&c))
    }

    fn event_json(&self, payload: &[u8]) -> Option<Value> {
        decode::<R::Event>(payload, MAX_GAME_VALUE).ok().map(|e| json(&e))
    }

    fn reject_json(&self, payload: &[u8]) -> Option<Value> {
        decode::<R::Reject>(payload, MAX_GAME_VALUE).ok().map(|r| json(&r))
    }

    fn section_json(&self, section: &GameSnapshot) -> Result<GameJson, String> {
        let values = decode_snapshot::<R>(section).map_err(|e| e.to_string())?;
        Ok(GameJson {
            rules: R::NAME.to_owned(),
            units: values.units.iter().map(|(id, u)| (*id, json(u))).collect(),
            objects: values.objects.iter().map(|(id, o)| (*id, json(o))).collect(),
            players: values.players.iter().map(json).collect(),
            world: json(&values.state),
        })
    }

    fn unit_json(&self, world: &World, unit: EntityId) -> Option<Value> {
        world.game::<R>()?.unit(unit).map(json)
    }

    fn player_json(&self, world: &World, player: sim::PlayerId) -> Option<Value> {
        world.game::<R>()?.player(player).map(json)
    }
}

/// Collects each module's codec, in step order.
struct Codecs(Vec<Box<dyn ModuleCodec>>);

impl ModuleVisitor for Codecs {
    fn module<R: Rules>(&mut self) {
        self.0.push(Box::new(CodecOf::<R>(std::marker::PhantomData)));
    }
}

/// Any `sim::rules::Modules` (one `Rules` type or a tuple of them) as a [`Ruleset`], built with `Default`.
pub struct RulesOf<M> {
    rules: std::marker::PhantomData<fn() -> M>,
    name: &'static str,
    version: u32,
    codecs: Vec<Box<dyn ModuleCodec>>,
    bots: Option<BotMaker>,
    summary: Option<fn(&World) -> Vec<String>>,
}

impl<M: Modules> RulesOf<M> {
    /// The game of the modules `M`, named as its first module (its name and version): the way
    /// to register a game of one module.
    pub fn new() -> Self {
        let (name, version) = M::list().first().copied().unwrap_or(("none", 0));
        Self::named(name, version)
    }

    /// The game of the modules `M`, under its own name and version (a game of several modules).
    pub fn named(name: &'static str, version: u32) -> Self {
        let mut codecs = Codecs(Vec::new());
        M::visit(&mut codecs);
        Self { rules: std::marker::PhantomData, name, version, codecs: codecs.0, bots: None, summary: None }
    }

    /// The ruleset, whose seats `make` can play.
    #[must_use]
    pub fn with_bots(self, make: BotMaker) -> Self {
        Self { bots: Some(make), ..self }
    }

    /// The ruleset, whose games `summary` sums up ([`Ruleset::summary`]).
    #[must_use]
    pub fn with_summary(self, summary: fn(&World) -> Vec<String>) -> Self {
        Self { summary: Some(summary), ..self }
    }

    fn codec(&self, rules: &str) -> Option<&dyn ModuleCodec> {
        self.codecs.iter().find(|c| c.name() == rules).map(|c| &**c)
    }
}

impl<M: Modules> Default for RulesOf<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Modules + Default> Ruleset for RulesOf<M> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn version(&self) -> u32 {
        self.version
    }

    fn modules(&self) -> Vec<(&'static str, u32)> {
        M::list()
    }

    fn new_world(&self, desc: WorldDesc, obstructions: Vec<(ObstructionId, Obstruction)>, settings: Settings) -> Result<World, SetupError> {
        World::with_rules(desc, obstructions, settings, M::default())
    }

    fn load(&self, bytes: &[u8]) -> Result<World, SnapshotError> {
        World::load_with_rules(bytes, M::default())
    }

    fn command_from_json(&self, value: &Value) -> Result<(String, Vec<u8>), String> {
        // `{"MODULE": COMMAND}` names its module.
        if let Value::Object(map) = value
            && let [(key, inner)] = map.iter().collect::<Vec<_>>().as_slice()
            && let Some(codec) = self.codec(key)
        {
            return Ok((codec.name().to_owned(), codec.command_from_json(inner)?));
        }
        let mut read = Vec::new();
        let mut errors = Vec::new();
        for codec in &self.codecs {
            match codec.command_from_json(value) {
                Ok(payload) => read.push((codec.name(), payload)),
                Err(e) => errors.push(e),
            }
        }
        match read.len() {
            1 => Ok(read.pop().map(|(name, payload)| (name.to_owned(), payload)).unwrap_or_default()),
            0 if errors.len() == 1 => Err(errors.remove(0)),
            0 => Err(errors.join("; ")),
            _ => {
                let names: Vec<&str> = read.iter().map(|(name, _)| *name).collect();
                Err(format!("modules {} all read it: name one, as {{\"{}\": …}}", names.join(", "), names[0]))
            }
        }
    }

    fn command_json(&self, rules: &str, payload: &[u8]) -> Option<Value> {
        self.codec(rules)?.command_json(payload)
    }

    fn event_json(&self, rules: &str, payload: &[u8]) -> Option<Value> {
        self.codec(rules)?.event_json(payload)
    }

    fn reject_json(&self, rules: &str, payload: &[u8]) -> Option<Value> {
        self.codec(rules)?.reject_json(payload)
    }

    fn section_json(&self, section: &GameSnapshot) -> Option<Result<GameJson, String>> {
        Some(self.codec(&section.rules)?.section_json(section))
    }

    fn unit_json(&self, world: &World, unit: EntityId) -> Vec<(&'static str, Value)> {
        self.codecs.iter().filter_map(|c| Some((c.name(), c.unit_json(world, unit)?))).collect()
    }

    fn player_json(&self, world: &World, player: sim::PlayerId) -> Vec<(&'static str, Value)> {
        self.codecs.iter().filter_map(|c| Some((c.name(), c.player_json(world, player)?))).collect()
    }

    fn bot(&self, player: PlayerId, seed: u64) -> Option<Box<dyn Bot>> {
        self.bots.map(|make| make(player, seed))
    }

    fn summary(&self, world: &World) -> Vec<String> {
        self.summary.map(|f| f(world)).unwrap_or_default()
    }
}

/// The rulesets a program knows, by name.
#[derive(Clone, Default)]
pub struct Rulesets {
    list: Vec<Arc<dyn Ruleset>>,
}

impl std::fmt::Debug for Rulesets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.list.iter().map(|r| (r.name(), r.version()))).finish()
    }
}

impl Rulesets {
    /// No rulesets: only worlds without game rules.
    pub fn none() -> Self {
        Self::default()
    }

    /// This registry and one more ruleset (a later one of the same name replaces it).
    #[must_use]
    pub fn with(self, ruleset: impl Ruleset + 'static) -> Self {
        self.with_shared(Arc::new(ruleset))
    }

    /// This registry and one more shared ruleset (a later one of the same name replaces it).
    #[must_use]
    pub fn with_shared(mut self, ruleset: Arc<dyn Ruleset>) -> Self {
        self.list.retain(|r| r.name() != ruleset.name());
        self.list.push(ruleset);
        self
    }

    /// The rulesets known, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Ruleset>> {
        self.list.iter()
    }

    /// The ruleset of a name.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Ruleset>> {
        self.find(name).cloned()
    }

    /// The ruleset of a name, borrowed.
    pub fn find(&self, name: &str) -> Option<&Arc<dyn Ruleset>> {
        self.list.iter().find(|r| r.name() == name)
    }

    /// The names known, in the order added, for messages (`skirmish 1, …`, or `none`).
    pub fn known(&self) -> String {
        if self.list.is_empty() {
            return "none".to_owned();
        }
        self.list.iter().map(|r| format!("{} {}", r.name(), r.version())).collect::<Vec<_>>().join(", ")
    }

    /// The ruleset a replay or snapshot names, at the version it names.
    ///
    /// # Errors
    /// [`Error::UnknownRuleset`] or [`Error::RulesetVersion`], naming the ruleset and version asked
    /// for and the ones known.
    pub fn resolve(&self, name: &str, version: u32) -> Result<Arc<dyn Ruleset>, Error> {
        match self.get(name) {
            Some(r) if r.version() == version => Ok(r),
            Some(r) => Err(Error::RulesetVersion { name: name.to_owned(), version, known: r.version() }),
            None => Err(Error::UnknownRuleset { name: name.to_owned(), version, known: self.known() }),
        }
    }

    /// The game whose modules are exactly `modules` (names and versions, in step order).
    pub fn by_modules(&self, modules: &[(String, u32)]) -> Option<&Arc<dyn Ruleset>> {
        self.list.iter().find(|r| {
            let own = r.modules();
            own.len() == modules.len() && own.iter().zip(modules).all(|((n, v), (m, w))| n == m && v == w)
        })
    }

    /// The game a world runs (found by its modules), if this registry knows it.
    pub fn of_world(&self, world: &World) -> Option<&Arc<dyn Ruleset>> {
        let modules: Vec<(String, u32)> = world.rules_names().into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
        if modules.is_empty() {
            return None;
        }
        self.by_modules(&modules)
    }

    /// A world from snapshot bytes, with the rule modules the snapshot holds (or none).
    ///
    /// # Errors
    /// [`Error::Snapshot`], or [`Error::UnknownModules`] when no game known has those modules.
    pub fn load(&self, bytes: &[u8]) -> Result<World, Error> {
        match World::load(bytes) {
            Err(SnapshotError::Rules { found, .. }) if !found.is_empty() => match self.by_modules(&found) {
                Some(r) => Ok(r.load(bytes)?),
                None => Err(Error::UnknownModules { found: sim::snapshot::rules_text(&found), known: self.known() }),
            },
            other => Ok(other?),
        }
    }
}
