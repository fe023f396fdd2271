//! Bots: players' clients that send the game's commands. A bot runs outside the rules, as a
//! player's program would: it reads the world, sees only its own units and buildings and the
//! enemies within [`VISION_RADIUS`] of them (and the map: terrain, trees), and decides from its
//! seed alone, so a game of bots is a pure function of the world and the seeds.
//!
//! The plan, every [`DECIDE_TURNS`] turns: idle workers gather at the nearest tree; the town
//! centre trains workers up to [`MAX_WORKERS`]; with enough workers and wood, two of them build a
//! barracks near the town centre; the barracks trains spearmen and archers; soldiers stand by
//! until [`ATTACK_ARMY`] of them are idle, then attack-move to the last enemy building seen (its
//! centre), or scout a random point when none has been seen.

use pathing::{Fixed, ObstructionId, WorldPos};
use sim::{Command, EntityId, PlayerId, SimRng, World};

use crate::combat::{Fight, Fighter};
use crate::construction::Building;
use crate::gathering::Haul;
use crate::{
    BUILDING_CLASS, BuildingKind, Combat, CombatCommand, Construction, ConstructionCommand, GameCommand, Gathering, GatheringCommand,
    Production, ProductionCommand, UnitKind, VISION_RADIUS,
};

/// Turns between two decisions of a bot.
pub const DECIDE_TURNS: u32 = 5;
/// Workers a bot trains at most.
pub const MAX_WORKERS: usize = 10;
/// Idle soldiers a bot gathers before it attacks.
pub const ATTACK_ARMY: usize = 5;
/// Distance from the town centre's centre at which a bot tries to lay its barracks.
/// `[Units: metres]`
pub const BARRACKS_DISTANCE: i32 = 16;
/// Distance from the map's edge within which a bot never scouts. `[Units: metres]`
pub const SCOUT_MARGIN: i32 = 20;

/// A bot playing one player.
#[derive(Clone, Debug)]
pub struct Bot {
    player: PlayerId,
    rng: SimRng,
    seq: u32,
    /// The last enemy building seen (its id and centre).
    enemy: Option<(ObstructionId, WorldPos)>,
    /// How many barracks spots the bot has tried.
    tries: u32,
}

impl Bot {
    /// A bot for `player`, deciding from `seed`.
    pub fn new(player: PlayerId, seed: u64) -> Self {
        Self { player, rng: SimRng::with_stream(seed, u64::from(player.0)), seq: 0, enemy: None, tries: 0 }
    }

    /// The player it plays.
    pub fn player(&self) -> PlayerId {
        self.player
    }

    /// The commands the bot sends for `turn` (the world's next turn).
    pub fn commands(&mut self, world: &World, turn: u32) -> Vec<Command> {
        if !turn.is_multiple_of(DECIDE_TURNS) {
            return Vec::new();
        }
        let (Some(combat), Some(gathering), Some(construction), Some(production)) =
            (world.game::<Combat>(), world.game::<Gathering>(), world.game::<Construction>(), world.game::<Production>())
        else {
            return Vec::new();
        };
        let me = self.player;
        let mut wood = crate::gathering::wood_of(world, me);
        let obstructions = world.nav().obstructions();
        let units: Vec<(&sim::Unit, &Fighter)> = combat.units().filter(|(u, _)| u.owner == me).collect();
        let buildings: Vec<(ObstructionId, &Building, WorldPos)> = crate::construction::buildings(&construction)
            .filter(|(_, b)| b.owner == me)
            .filter_map(|(id, b)| obstructions.get(&id).map(|o| (id, b, o.square.center())))
            .collect();
        // The player's units see through the view's spatial index, its few buildings by a scan.
        let sees = |p: WorldPos| {
            let r = i128::from(VISION_RADIUS.to_bits());
            buildings.iter().any(|b| sim::rules::distance2(b.2, p) <= r * r)
                || combat.nearest(p, VISION_RADIUS, |u, _| u.owner == me).is_some()
        };
        // Remember the nearest enemy building in sight; forget one seen gone.
        if let Some((id, at)) = self.enemy
            && sees(at)
            && construction.object(id).is_none()
        {
            self.enemy = None;
        }
        for (id, b) in crate::construction::buildings(&construction) {
            if b.owner != me
                && let Some(o) = obstructions.get(&id)
                && sees(o.square.center())
            {
                self.enemy = Some((id, o.square.center()));
                break;
            }
        }
        let mut out = Vec::new();
        let mut send = |bot: &mut Bot, command: GameCommand| {
            out.push(Command { turn, player: me, seq: bot.seq, kind: command.kind() });
            bot.seq += 1;
        };
        // A unit doing nothing in any module.
        let idle = |u: &sim::Unit, s: &Fighter| {
            s.task == Fight::Idle
                && gathering.unit(u.id).is_none_or(|h| h.task == Haul::Idle)
                && construction.unit(u.id).is_none_or(|b| b.building.is_none())
        };
        let workers: Vec<EntityId> = units.iter().filter(|(_, s)| s.kind == UnitKind::Worker).map(|(u, _)| u.id).collect();
        // Idle workers gather at the tree nearest to them.
        for (u, s) in &units {
            if s.kind == UnitKind::Worker && idle(u, s) {
                let tree = crate::gathering::trees(&gathering)
                    .filter_map(|(t, _)| obstructions.get(&t).map(|o| (sim::rules::distance2(u.pos, o.square.center()), t)))
                    .min()
                    .map(|(_, t)| t);
                if let Some(tree) = tree {
                    send(self, GatheringCommand::Gather { units: vec![u.id], tree }.into());
                }
            }
        }
        let town = buildings.iter().find(|(_, b, _)| b.kind == BuildingKind::TownCentre && b.finished);
        let barracks: Vec<&(ObstructionId, &Building, WorldPos)> =
            buildings.iter().filter(|(_, b, _)| b.kind == BuildingKind::Barracks).collect();
        if let Some(&(tc, _, centre)) = town {
            let cost = UnitKind::Worker.stats().cost;
            if workers.len() < MAX_WORKERS && crate::production::queue_len(&production, tc) == 0 && wood >= cost {
                send(self, ProductionCommand::Train { building: tc, kind: UnitKind::Worker, count: 1 }.into());
                wood -= cost;
            }
            let cost = BuildingKind::Barracks.stats().cost;
            if barracks.is_empty()
                && workers.len() >= 5
                && wood >= cost
                && let Some(square) = self.barracks_spot(world, centre)
            {
                let builders = workers[..2].to_vec();
                send(self, ConstructionCommand::Build { kind: BuildingKind::Barracks, square, builders }.into());
                wood -= cost;
            }
        }
        for &&(id, b, _) in &barracks {
            if b.finished && crate::production::queue_len(&production, id) < 2 {
                let kind = if self.rng.below(2) == 0 { UnitKind::Spearman } else { UnitKind::Archer };
                let cost = kind.stats().cost;
                if wood >= cost {
                    send(self, ProductionCommand::Train { building: id, kind, count: 1 }.into());
                    wood -= cost;
                }
            }
        }
        // The army: soldiers standing idle go together once there are enough of them.
        let army: Vec<EntityId> = units.iter().filter(|(u, s)| s.kind.is_soldier() && idle(u, s)).map(|(u, _)| u.id).collect();
        if army.len() >= ATTACK_ARMY {
            // An attack-move rather than an attack: the building may be gone unseen, and the army
            // fights whatever it meets on the way.
            let to = match self.enemy {
                Some((_, at)) => at,
                None => self.scout_point(world),
            };
            send(self, CombatCommand::AttackMove { units: army, to }.into());
        }
        out
    }

    /// A footprint for a barracks round the town centre that passes the placement check, trying
    /// the eight directions in turn from where the last try stopped.
    fn barracks_spot(&mut self, world: &World, centre: WorldPos) -> Option<sim::SquareSpec> {
        for _ in 0..8 {
            let k = self.tries % 8;
            self.tries += 1;
            let d = BARRACKS_DISTANCE;
            let (dx, dz) = [(d, 0), (0, d), (-d, 0), (0, -d), (d, d), (-d, d), (-d, -d), (d, -d)][k as usize];
            let square =
                crate::footprint(BuildingKind::Barracks, centre.x + Fixed::from_num(dx), centre.z + Fixed::from_num(dz), Fixed::ZERO);
            let Ok(sq) = pathing::raster::editor_square(square.x, square.z, square.w, square.h, square.degrees) else { continue };
            if world.nav().check_building_placement(BUILDING_CLASS, &sq).is_ok() {
                return Some(square);
            }
        }
        None
    }

    /// A random point on the map, away from its edges.
    fn scout_point(&mut self, world: &World) -> WorldPos {
        let grid = world.nav().grid();
        let side = |cells: u32| i32::try_from(cells).unwrap_or(i32::MAX);
        let (w, h) = (side(grid.width()), side(grid.height()));
        let pick = |rng: &mut SimRng, n: i32| {
            let span = (n - 2 * SCOUT_MARGIN).max(1);
            SCOUT_MARGIN.min(n / 2) + i32::try_from(rng.below(u32::try_from(span).unwrap_or(1))).unwrap_or(0)
        };
        let (x, z) = (pick(&mut self.rng, w), pick(&mut self.rng, h));
        WorldPos::new(Fixed::from_num(x) * grid.cell_size(), Fixed::from_num(z) * grid.cell_size())
    }
}
