//! A small game ruleset for the `command_stream` target, so the fuzzed worlds run game rules too:
//! per-unit hit points, a per-player score, walls the rules place and remove, units the rules
//! spawn, orders the rules give. Its commands reach every part of the game-rules API (checks,
//! typed refusals, each kind of action, game events), and every action may be refused by the core.

use pathing::passability::ObstructionId;
use pathing::{Fixed, PassClass, WorldPos};
use serde::{Deserialize, Serialize};
use sim::rules::{Ctx, Rules, View};
use sim::{CommandKind, EntityId, Event, GoalSpec, PlayerId, SquareSpec, Unit};

/// The rules.
#[derive(Clone, Debug, Default)]
pub struct FuzzRules;

/// A unit's game state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuzzUnit {
    /// Hit points, at most [`MAX_HP`].
    pub hp: u16,
}

/// The game's world state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuzzWorld {
    /// Walls the rules placed, oldest first, at most [`MAX_WALLS`].
    pub walls: Vec<ObstructionId>,
    /// Steps run.
    pub steps: u32,
}

/// A game command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FuzzCommand {
    /// Damage another player's unit; at 0 hit points it is removed.
    Hit { unit: EntityId, damage: u16 },
    /// Place a wall (as the world).
    Wall { square: SquareSpec },
    /// Remove the oldest wall.
    Unwall,
    /// Spawn units for the sender.
    Spawn { at: WorldPos, count: u16 },
    /// Order one of the sender's units somewhere.
    Order { unit: EntityId, to: WorldPos },
}

/// Why a command is refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FuzzReject {
    /// No live unit, or one of the wrong player.
    Unit,
    /// A number outside its limits.
    Limit,
}

/// A game event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FuzzEvent {
    /// A unit died of its hits.
    Died(EntityId),
    /// An action was refused by the core.
    Refused,
}

/// Most hit points.
pub const MAX_HP: u16 = 12;

/// Most walls standing.
pub const MAX_WALLS: usize = 6;

impl Rules for FuzzRules {
    const NAME: &'static str = "fuzz";
    const VERSION: u32 = 1;
    type Unit = FuzzUnit;
    type Object = u32;
    type Player = u32;
    type State = FuzzWorld;
    type Command = FuzzCommand;
    type Event = FuzzEvent;
    type Reject = FuzzReject;

    fn new_unit(&self, state: &FuzzWorld, _unit: &Unit) -> FuzzUnit {
        FuzzUnit { hp: MAX_HP - (state.steps % 3) as u16 }
    }

    fn check(&self, view: &View<'_, Self>, player: PlayerId, command: &FuzzCommand) -> Result<(), FuzzReject> {
        match *command {
            FuzzCommand::Hit { unit, damage } => {
                let target = view.world().unit(unit).ok_or(FuzzReject::Unit)?;
                if target.owner == player {
                    return Err(FuzzReject::Unit);
                }
                if damage == 0 || damage > 2 * MAX_HP {
                    return Err(FuzzReject::Limit);
                }
            }
            FuzzCommand::Wall { .. } if view.state().walls.len() >= MAX_WALLS => return Err(FuzzReject::Limit),
            FuzzCommand::Unwall if view.state().walls.is_empty() => return Err(FuzzReject::Limit),
            FuzzCommand::Spawn { count, .. } if !(1..=4).contains(&count) => return Err(FuzzReject::Limit),
            FuzzCommand::Order { unit, .. } if view.world().unit(unit).is_none_or(|u| u.owner != player) => return Err(FuzzReject::Unit),
            _ => {}
        }
        Ok(())
    }

    fn apply(&self, ctx: &mut Ctx<'_, Self>, player: PlayerId, command: &FuzzCommand) {
        let outcome = match *command {
            FuzzCommand::Hit { unit, damage } => {
                let owner = ctx.world().unit(unit).map(|u| u.owner);
                let hp = ctx.unit_mut(unit).map(|u| {
                    u.hp = u.hp.saturating_sub(damage);
                    u.hp
                });
                if let Some(p) = ctx.player_mut(player) {
                    *p = p.saturating_add(u32::from(damage));
                }
                match (hp, owner) {
                    (Some(0), Some(owner)) => {
                        ctx.emit(&FuzzEvent::Died(unit));
                        ctx.act(owner, CommandKind::Remove { units: vec![unit] }).map(drop)
                    }
                    _ => Ok(()),
                }
            }
            FuzzCommand::Wall { square } => ctx.act(PlayerId(0), CommandKind::PlaceObstruction { square, flags: 3 }).map(|events| {
                let placed = events.iter().find_map(|e| if let Event::ObstructionPlaced { id } = e { Some(*id) } else { None });
                ctx.state_mut().walls.extend(placed);
            }),
            FuzzCommand::Unwall => {
                let id = ctx.state_mut().walls.remove(0);
                ctx.act(PlayerId(0), CommandKind::RemoveObstruction { id }).map(drop)
            }
            FuzzCommand::Spawn { at, count } => ctx
                .act(
                    player,
                    CommandKind::Spawn {
                        class: PassClass::of(0),
                        at,
                        count,
                        radius: Fixed::ONE / 2,
                        speed: Fixed::from_num(8),
                        turn_rate: None,
                    },
                )
                .map(drop),
            FuzzCommand::Order { unit, to } => {
                ctx.act(player, CommandKind::Move { units: vec![unit], goal: GoalSpec::Point(to), queue: false }).map(drop)
            }
        };
        if outcome.is_err() {
            ctx.emit(&FuzzEvent::Refused);
        }
    }

    fn step(&self, ctx: &mut Ctx<'_, Self>, events: &[Event]) {
        ctx.state_mut().steps += 1;
        // Units that arrived heal; every fourth step the most wounded unit near the map's
        // origin heals too.
        for e in events {
            if let Event::Arrived { unit } = e
                && let Some(u) = ctx.unit_mut(*unit)
            {
                u.hp = (u.hp + 1).min(MAX_HP);
            }
        }
        if ctx.state().steps.is_multiple_of(4)
            && let Some(unit) = ctx.view().nearest(WorldPos::from_int(0, 0), Fixed::from_num(4096), |_, s| s.hp < MAX_HP)
            && let Some(u) = ctx.unit_mut(unit)
        {
            u.hp += 1;
        }
    }
}
