//! The bot that plays a seat for `phalanx join --bot` and `phalanx host --bot-seat`: the game
//! rules' own bot when the scenario's rules have one (the skirmish AI for the skirmish rules), the
//! scripted [`Mover`] otherwise.

use replay::rules::{Bot, Rulesets};
use sim::{PlayerId, TurnReport, World};

use crate::client::Brain;
use crate::mover::Mover;
use crate::protocol::Order;

/// A seat's bot, chosen on the first turn from the rules the welcomed world runs (a client learns
/// the scenario only from the host's `Welcome`, after it was started).
pub struct SeatBot {
    rulesets: Rulesets,
    player: PlayerId,
    seed: u64,
    chosen: Option<Chosen>,
}

/// What plays the seat once the rules are known.
enum Chosen {
    /// The rules' bot.
    Rules(Box<dyn Bot>),
    /// The scripted mover, for a world without rules or with rules that have no bots.
    Mover(Mover),
}

impl SeatBot {
    /// A bot for `player`, deterministic from `seed`, knowing the rulesets in `rulesets`.
    pub fn new(rulesets: Rulesets, player: PlayerId, seed: u64) -> Self {
        Self { rulesets, player, seed, chosen: None }
    }

    /// Whether the rules' own bot plays (false: the scripted mover, or nothing chosen yet).
    pub fn plays_the_rules_bot(&self) -> bool {
        matches!(self.chosen, Some(Chosen::Rules(_)))
    }

    fn choose(&self, world: &World) -> Chosen {
        let bot = self.rulesets.of_world(world).and_then(|rules| rules.bot(self.player, self.seed));
        match bot {
            Some(bot) => Chosen::Rules(bot),
            None => Chosen::Mover(Mover::new(self.player, self.seed, 5, 16, 112)),
        }
    }
}

impl Brain for SeatBot {
    fn think(&mut self, world: &World, report: &TurnReport) -> Vec<Order> {
        let chosen = match &mut self.chosen {
            Some(chosen) => chosen,
            None => self.chosen.insert(self.choose(world)),
        };
        match chosen {
            Chosen::Rules(bot) => bot.commands(world).into_iter().map(|kind| Order { player: self.player, kind }).collect(),
            Chosen::Mover(mover) => mover.think(world, report),
        }
    }
}
