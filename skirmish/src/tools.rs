//! The reference game as the replay tools and the `phalanx` program see it (feature `tools`):
//! a [`replay::rules::Ruleset`] with the skirmish bots and a summary of each player's record.
//!
//! A game of its own registers itself the same way: `RulesOf::<MyGame>::new()` for one module,
//! `RulesOf::<(A, B)>::named("my-game", 1)` for several, with bots and a summary if it has them,
//! given to the program's registry (`phalanx_cli::Program::ruleset`).

use replay::rules::{Bot as SeatBot, RulesOf};
use sim::{CommandKind, World};

use crate::{Bot, PlayerSummary, Skirmish};

/// The reference game's ruleset for the tools: its bots play seats (`phalanx join --bot`,
/// `host --bot-seat`) and its summary gives each player's record and the winner.
pub fn ruleset() -> RulesOf<Skirmish> {
    RulesOf::<Skirmish>::named(crate::NAME, crate::VERSION)
        .with_bots(|player, seed| Box::new(SkirmishSeat(Bot::new(player, seed))))
        .with_summary(summary_lines)
}

/// Each player's record in a game of the reference rules ([`player_line`]), then the winner, or
/// the best score when no one has won yet.
pub fn summary_lines(world: &World) -> Vec<String> {
    let players = crate::summary(world);
    let mut lines: Vec<String> = players.iter().map(player_line).collect();
    let standing: Vec<_> = players.iter().filter(|p| !p.defeated && (p.units > 0 || p.buildings > 0)).collect();
    lines.push(match (crate::play::last_standing(&players), standing.as_slice()) {
        (Some(p), _) => format!("winner: player {p} (every other player destroyed)"),
        (None, [only]) if players.len() > 1 => format!("winner: player {} (the only one with units or buildings left)", only.player),
        _ => match players.iter().max_by_key(|p| (p.score, std::cmp::Reverse(p.player))) {
            Some(best) => format!("no winner yet; best score: player {} ({})", best.player, best.score),
            None => "no players".to_owned(),
        },
    });
    lines
}

/// One player's record, as `phalanx run` and `phalanx demo` print it.
pub fn player_line(p: &PlayerSummary) -> String {
    format!(
        "player {}: {} units, {} buildings; {} kills, {} deaths, {} razed; {} trained, {} wood gathered, {} buildings built; score {}",
        p.player, p.units, p.buildings, p.kills, p.deaths, p.razed, p.trained, p.gathered, p.built, p.score
    )
}

/// The reference game's bot as a seat's bot: the commands it gives for the turn the world is at.
struct SkirmishSeat(Bot);

impl SeatBot for SkirmishSeat {
    fn commands(&mut self, world: &World) -> Vec<CommandKind> {
        self.0.commands(world, world.turn()).into_iter().map(|c| c.kind).collect()
    }
}
