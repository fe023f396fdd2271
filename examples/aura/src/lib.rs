//! A studio's own game on Phalanx, as small as a game gets: units have hit points, a player may
//! strike another player's unit, and a unit with its aura on heals its own side's units near it.
//!
//! It is written against the public `sim::rules::Rules` API only (docs/game-rules.md), and its program
//! (`src/main.rs`) is the whole `phalanx` command line built for it with `phalanx-cli`:
//!
//! ```text
//! cargo run --release -p phalanx-example-aura -- run examples/aura/scenarios/aura.json --record aura.replay
//! cargo run --release -p phalanx-example-aura -- verify aura.replay --sync-test
//! ```
//!
//! Every rule is integers: hit points are `u16`, the aura's reach is fixed-point metres.

#![forbid(unsafe_code)]

use pathing::Fixed;
use replay::rules::RulesOf;
use serde::{Deserialize, Serialize};
use sim::rules::{Ctx, Rules, View};
use sim::{EntityId, Event, PlayerId, Unit, World};

/// The rules: a unit type, commands, events and refusals, and the aura's step.
#[derive(Clone, Debug, Default)]
pub struct Aura;

/// Hit points a unit is created with, and the most it can have. `[Units: hit points]`
pub const MAX_HP: u16 = 60;

/// Hit points a unit starts with: wounded, so that the aura has work to do. `[Units: hit points]`
pub const START_HP: u16 = 30;

/// How far from a unit with its aura on its own side's units are healed. `[Units: metres]`
pub const AURA_RADIUS: Fixed = Fixed::from_bits(6 << 16);

/// Turns between two pulses of every aura. `[Units: turns]`
pub const PULSE_TURNS: u32 = 2;

/// Most damage one strike does. `[Units: hit points]`
pub const MAX_STRIKE: u16 = 25;

/// One unit's state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuraUnit {
    /// Hit points, 0 to [`MAX_HP`]; a unit struck to 0 is removed.
    pub hp: u16,
    /// Whether the unit heals its side's units within [`AURA_RADIUS`].
    pub aura: bool,
}

/// One player's record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuraPlayer {
    /// Hit points its auras restored. `[Units: hit points]`
    pub healed: u32,
    /// Units of other players it struck down.
    pub kills: u32,
}

/// The game's world-wide state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuraWorld {
    /// Aura pulses so far, over all units.
    pub pulses: u32,
}

/// A player's command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuraCommand {
    /// Turns a unit's aura on or off; the unit must be the player's own.
    Aura {
        /// The unit.
        unit: EntityId,
        /// On or off.
        on: bool,
    },
    /// Takes `damage` hit points (1 to [`MAX_STRIKE`]) from another player's unit.
    Strike {
        /// The unit struck.
        unit: EntityId,
        /// Hit points taken.
        damage: u16,
    },
}

/// What the game reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuraEvent {
    /// A unit was healed to full.
    Restored {
        /// The unit.
        unit: EntityId,
    },
    /// A unit was struck down and removed.
    Fell {
        /// The unit.
        unit: EntityId,
        /// The player who struck it.
        by: PlayerId,
    },
}

/// Why a command is refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuraReject {
    /// No live unit has that id.
    NoSuchUnit,
    /// An aura on another player's unit.
    NotYours,
    /// A strike on the player's own unit.
    OwnUnit,
    /// Damage of 0 or more than [`MAX_STRIKE`].
    Damage,
}

impl Rules for Aura {
    const NAME: &'static str = "aura";
    const VERSION: u32 = 1;
    type Unit = AuraUnit;
    type Object = ();
    type Player = AuraPlayer;
    type State = AuraWorld;
    type Command = AuraCommand;
    type Event = AuraEvent;
    type Reject = AuraReject;

    fn new_unit(&self, _state: &AuraWorld, _unit: &Unit) -> AuraUnit {
        AuraUnit { hp: START_HP, aura: false }
    }

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &AuraCommand) -> Result<(), AuraReject> {
        match *command {
            AuraCommand::Aura { unit, .. } => {
                let target = view.world().unit(unit).ok_or(AuraReject::NoSuchUnit)?;
                if target.owner == player { Ok(()) } else { Err(AuraReject::NotYours) }
            }
            AuraCommand::Strike { unit, damage } => {
                let target = view.world().unit(unit).ok_or(AuraReject::NoSuchUnit)?;
                if target.owner == player {
                    Err(AuraReject::OwnUnit)
                } else if !(1..=MAX_STRIKE).contains(&damage) {
                    Err(AuraReject::Damage)
                } else {
                    Ok(())
                }
            }
        }
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &AuraCommand) {
        match *command {
            AuraCommand::Aura { unit, on } => {
                if let Some(state) = ctx.unit_mut(unit) {
                    state.aura = on;
                }
            }
            AuraCommand::Strike { unit, damage } => {
                let Some(owner) = ctx.world().unit(unit).map(|u| u.owner) else { return };
                let Some(state) = ctx.unit_mut(unit) else { return };
                state.hp = state.hp.saturating_sub(damage);
                if state.hp == 0 {
                    // Checked: the unit is live and its owner's, so the removal is accepted.
                    if ctx.act(owner, sim::CommandKind::Remove { units: vec![unit] }).is_ok() {
                        ctx.emit(&AuraEvent::Fell { unit, by: player });
                        if let Some(record) = ctx.player_mut(player) {
                            record.kills += 1;
                        }
                    }
                }
            }
        }
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, _events: &[Event]) {
        if ctx.world().turn() % PULSE_TURNS != 0 {
            return;
        }
        // Auras pulse in unit id order; each heals every wounded unit of its side within reach by
        // one point, nearest first (ties by id), so the order of the heals is total.
        let auras: Vec<(EntityId, PlayerId, pathing::WorldPos)> =
            ctx.view().units().filter(|(_, s)| s.aura).map(|(u, _)| (u.id, u.owner, u.pos)).collect();
        for (_, owner, centre) in auras {
            let wounded = ctx.view().units_within(centre, AURA_RADIUS, |u, s| u.owner == owner && s.hp < MAX_HP);
            for unit in wounded {
                let Some(state) = ctx.unit_mut(unit) else { continue };
                state.hp += 1;
                let full = state.hp == MAX_HP;
                if let Some(record) = ctx.player_mut(owner) {
                    record.healed += 1;
                }
                if full {
                    ctx.emit(&AuraEvent::Restored { unit });
                }
            }
            ctx.state_mut().pulses += 1;
        }
    }
}

/// The game as the tools see it: its rules and a summary of each player's record, which
/// `aura run` prints.
pub fn ruleset() -> RulesOf<Aura> {
    RulesOf::<Aura>::new().with_summary(summary)
}

/// One line per player who has units or a record: units, hit points, hit points healed, kills.
pub fn summary(world: &World) -> Vec<String> {
    let Some(game) = world.game::<Aura>() else { return Vec::new() };
    let players = world.settings().players;
    (1..=players)
        .map(PlayerId)
        .map(|p| {
            let (units, hp) =
                game.units().filter(|(u, _)| u.owner == p).fold((0u32, 0u32), |(n, hp), (_, s)| (n + 1, hp + u32::from(s.hp)));
            let record = game.player(p).cloned().unwrap_or_default();
            format!("player {}: {units} units, {hp} hit points; {} healed, {} kills", p.0, record.healed, record.kills)
        })
        .collect()
}
