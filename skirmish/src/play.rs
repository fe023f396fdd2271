//! A whole game of bots on a world, its outcome, and the per-player summary a demo prints, all
//! read from the modules' state (`world.game::<Combat>()`, …).

use pathing::{Fixed, ObstructionId};
use sim::{Command, PlayerId, TurnReport, World};

use crate::{
    BUILDING_CLASS, Bot, BuildingKind, Combat, Construction, GameCommand, Gathering, GatheringCommand, Production, ProductionCommand,
};

/// Score of one enemy unit killed, at the turn limit. `[Units: points]`
pub const SCORE_KILL: u32 = 10;
/// Score of one enemy building destroyed. `[Units: points]`
pub const SCORE_RAZE: u32 = 50;
/// Score of one unit trained. `[Units: points]`
pub const SCORE_TRAIN: u32 = 5;
/// Score of one building finished. `[Units: points]`
pub const SCORE_BUILD: u32 = 20;
/// Score of one wood gathered. `[Units: points]`
pub const SCORE_WOOD: u32 = 1;

/// One player's record, read from the game's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerSummary {
    /// The player.
    pub player: PlayerId,
    /// Enemy units killed.
    pub kills: u32,
    /// Own units lost.
    pub deaths: u32,
    /// Enemy buildings destroyed.
    pub razed: u32,
    /// Units trained.
    pub trained: u32,
    /// Wood gathered. `[Units: wood]`
    pub gathered: u32,
    /// Buildings finished.
    pub built: u32,
    /// Wood in store. `[Units: wood]`
    pub wood: u32,
    /// Live units.
    pub units: u32,
    /// Standing buildings (foundations included).
    pub buildings: u32,
    /// Started, and now without a town centre and without units.
    pub defeated: bool,
    /// The score at the turn limit (see the `SCORE_` constants).
    pub score: u32,
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The winner: the last player standing, or at the turn limit the one best score (none on a
    /// tie).
    pub winner: Option<PlayerId>,
    /// Whether every player but the winner was defeated (rather than the turn limit reached).
    pub decisive: bool,
    /// Turns played.
    pub turns: u32,
    /// Every player's record, player 1 first.
    pub players: Vec<PlayerSummary>,
}

/// Every player's record, player 1 first (empty for a world without these modules).
pub fn summary(world: &World) -> Vec<PlayerSummary> {
    let (Some(combat), Some(gathering), Some(construction), Some(production)) =
        (world.game::<Combat>(), world.game::<Gathering>(), world.game::<Construction>(), world.game::<Production>())
    else {
        return Vec::new();
    };
    (1..=world.settings().players)
        .map(PlayerId)
        .map(|player| {
            let record = combat.player(player).cloned().unwrap_or_default();
            let stock = gathering.player(player).cloned().unwrap_or_default();
            let works = construction.player(player).cloned().unwrap_or_default();
            let output = production.player(player).cloned().unwrap_or_default();
            let units = world.units().filter(|u| u.owner == player).count() as u32;
            let owned: Vec<&crate::construction::Building> =
                crate::construction::buildings(&construction).map(|(_, b)| b).filter(|b| b.owner == player).collect();
            let buildings = owned.len() as u32;
            let town = owned.iter().any(|b| b.kind == BuildingKind::TownCentre);
            let score = record.kills * SCORE_KILL
                + record.razed * SCORE_RAZE
                + output.trained * SCORE_TRAIN
                + works.built * SCORE_BUILD
                + stock.gathered * SCORE_WOOD;
            PlayerSummary {
                player,
                kills: record.kills,
                deaths: record.deaths,
                razed: record.razed,
                trained: output.trained,
                gathered: stock.gathered,
                built: works.built,
                wood: stock.wood,
                units,
                buildings,
                defeated: output.started && !town && units == 0,
                score,
            }
        })
        .collect()
}

/// The last player standing, when every other started player is defeated.
pub fn last_standing(summary: &[PlayerSummary]) -> Option<PlayerId> {
    let mut standing = summary.iter().filter(|p| !p.defeated && (p.units > 0 || p.buildings > 0));
    let first = standing.next()?;
    (standing.next().is_none() && summary.iter().any(|p| p.defeated)).then_some(first.player)
}

/// The game's commands of a turn from every bot, in player order.
pub fn bot_commands(world: &World, bots: &mut [Bot]) -> Vec<Command> {
    let turn = world.turn();
    let mut commands: Vec<Command> = bots.iter_mut().flat_map(|b| b.commands(world, turn)).collect();
    commands.sort_by_key(|c| (c.player, c.seq));
    commands
}

/// Plays bots against each other on `world` (started already) until one player is left or
/// `max_turns` more turns have passed; `observe` sees each turn's commands and report.
pub fn play_observed(
    world: &mut World,
    bots: &mut [Bot],
    max_turns: u32,
    observe: &mut dyn FnMut(&World, &[Command], &TurnReport),
) -> Outcome {
    let mut turns = 0;
    while turns < max_turns {
        let commands = bot_commands(world, bots);
        let report = world.step(&commands);
        observe(world, &commands, &report);
        turns += 1;
        let outcome = outcome(world, turns);
        if outcome.decisive {
            return outcome;
        }
    }
    outcome(world, turns)
}

/// The game's outcome as it stands after `turns` turns: the last player standing (decisive), or
/// else the one best score (none on a tie), as at a turn limit.
pub fn outcome(world: &World, turns: u32) -> Outcome {
    let players = summary(world);
    if let Some(winner) = last_standing(&players) {
        return Outcome { winner: Some(winner), decisive: true, turns, players };
    }
    let best = players.iter().map(|p| p.score).max().unwrap_or(0);
    let mut top = players.iter().filter(|p| p.score == best);
    let winner = match (top.next(), top.next()) {
        (Some(p), None) => Some(p.player),
        _ => None,
    };
    Outcome { winner, decisive: false, turns, players }
}

/// [`play_observed`] without an observer.
pub fn play(world: &mut World, bots: &mut [Bot], max_turns: u32) -> Outcome {
    play_observed(world, bots, max_turns, &mut |_, _, _| {})
}

/// The whole metre nearest to `near` (searched in rings of 2 m, up to `radius` metres, east then
/// north first on each ring) where a town centre passes the placement check.
pub fn start_spot(world: &World, near: (i32, i32), radius: i32) -> Option<(i32, i32)> {
    let fits = |x: i32, z: i32| {
        let sq = crate::footprint(BuildingKind::TownCentre, Fixed::from_num(x), Fixed::from_num(z), Fixed::ZERO);
        pathing::raster::editor_square(sq.x, sq.z, sq.w, sq.h, sq.degrees)
            .is_ok_and(|s| world.nav().check_building_placement(BUILDING_CLASS, &s).is_ok())
    };
    for r in (0..=radius).step_by(2) {
        for dz in (-r..=r).step_by(2) {
            for dx in (-r..=r).step_by(2) {
                if (dx.abs() == r || dz.abs() == r) && fits(near.0 + dx, near.1 + dz) {
                    return Some((near.0 + dx, near.1 + dz));
                }
            }
        }
    }
    None
}

/// The world's turn-0 commands of a game: the trees `first..=last` with `wood` each, then each
/// player's start at its spot.
pub fn setup(first: ObstructionId, last: ObstructionId, wood: u32, starts: &[(u8, (i32, i32))]) -> Vec<Command> {
    let mut kinds: Vec<GameCommand> = vec![GatheringCommand::Resources { first, last, wood }.into()];
    kinds.extend(starts.iter().map(|&(player, (x, z))| ProductionCommand::Start { player, x, z }.into()));
    kinds.iter().enumerate().map(|(seq, c)| Command { turn: 0, player: PlayerId(0), seq: seq as u32, kind: c.kind() }).collect()
}
