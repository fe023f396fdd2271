//! Test worlds and helpers shared by the skirmish tests: a flat walled field with one tree,
//! commands of the game and of the world, and reads of the game's state.

#![allow(dead_code, reason = "each test file uses some of the helpers")]

use pathing::{ObstructionId, WorldPos};
use sim::{Command, EntityId, Event, PlayerId, Settings, World};
use skirmish::{Combat, CombatCommand, Construction, GameCommand, Gathering, SKIRMISH, SkirmishEvent, SkirmishReject, UnitKind};

/// The field's width and depth. `[Units: metres]`
pub const W: i32 = 64;
/// The field's depth. `[Units: metres]`
pub const H: i32 = 48;
/// The tree's obstruction id (after the four border walls).
pub const TREE: ObstructionId = ObstructionId(5);
/// The tree's centre. `[Units: metres]`
pub const TREE_AT: (i32, i32) = (31, 36);

/// A flat 64 × 48 m field walled round, with one 2 × 2 m tree (obstruction 5), two players.
pub fn field(threads: usize) -> World {
    let walls = [(0, 0, W, 1), (0, H - 1, W, H), (0, 1, 1, H - 1), (W - 1, 1, W, H - 1), (30, 35, 32, 37)];
    let (desc, obstructions) = sim::test_support::flat_geometry(W as u32, H as u32, &walls);
    let settings = Settings { seed: 7, players: 2, ..Settings::default() };
    let mut world = World::with_rules(desc, obstructions, settings, SKIRMISH).expect("a skirmish world");
    world.set_threads(threads).expect("threads");
    world
}

/// A game command, of whichever module.
pub fn game(turn: u32, player: u8, seq: u32, command: impl Into<GameCommand>) -> Command {
    Command { turn, player: PlayerId(player), seq, kind: command.into().kind() }
}

/// The world's command placing whole units of a kind.
pub fn spawn(turn: u32, seq: u32, player: u8, kind: UnitKind, x: i32, z: i32, count: u16) -> Command {
    game(turn, 0, seq, CombatCommand::Spawn { player, kind, at: WorldPos::from_int(x, z), count })
}

/// Player `player`'s live units, by id.
pub fn units_of(world: &World, player: u8) -> Vec<EntityId> {
    let mut ids: Vec<EntityId> = world.units().filter(|u| u.owner == PlayerId(player)).map(|u| u.id).collect();
    ids.sort_unstable();
    ids
}

/// The game's events of a turn.
pub fn game_events(events: &[Event]) -> Vec<SkirmishEvent> {
    skirmish::events(events).collect()
}

/// The game's rejections of a turn, in order (`None` for a core rejection).
pub fn rejections(events: &[Event]) -> Vec<Option<SkirmishReject>> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Rejected { reason, .. } => Some(skirmish::reject(reason)),
            _ => None,
        })
        .collect()
}

/// The invariants every turn keeps: hit points within the kind's, carried wood within the
/// capacity, buildings' hit points within their maximum, no unit on a navcell its class cannot
/// enter unless it is leaving it (from under a new foundation), the world's own invariants, and the incremental digest equal to a fresh one.
pub fn check_invariants(world: &World) {
    let combat = world.game::<Combat>().expect("the combat module");
    let gathering = world.game::<Gathering>().expect("the gathering module");
    let construction = world.game::<Construction>().expect("the construction module");
    let pass = world.nav().class_nav(skirmish::UNIT_CLASS).expect("the unit class").pass_map();
    for (unit, state) in combat.units() {
        assert!(state.hp >= 1 && state.hp <= state.kind.stats().hp, "unit {} has {} hp", unit.id, state.hp);
        let hauler = gathering.unit(unit.id).expect("every unit has gathering state");
        assert!(hauler.wood <= skirmish::CARRY_CAPACITY);
        assert!(hauler.wood == 0 || state.kind == UnitKind::Worker, "only workers carry wood");
        // One task at a time: a unit fighting neither hauls nor builds, one hauling does not build.
        let fighting = state.task != skirmish::combat::Fight::Idle;
        let hauling = hauler.task != skirmish::gathering::Haul::Idle;
        let building = construction.unit(unit.id).expect("every unit has construction state").building.is_some();
        assert!(u8::from(fighting) + u8::from(hauling) + u8::from(building) <= 1, "unit {} has two tasks", unit.id);
        // A foundation laid over units leaves them on blocked navcells until the core walks them
        // off: on an escape path, or waiting for one (a new order from the rules is planned as an
        // escape first); any other unit stands on a passable navcell. `Stranded` bounds how long.
        let passable = pass.is_passable(world.navcell_of(unit.pos));
        let leaving = unit.escape || unit.state == sim::UnitState::WaitingForPath;
        assert!(passable || leaving, "unit {} stands on an impassable navcell at turn {} and is not leaving it", unit.id, world.turn());
    }
    // Every building has its hit points in combat, and the two agree on its owner.
    let buildings: Vec<ObstructionId> = skirmish::construction::buildings(&construction).map(|(id, _)| id).collect();
    let hulls: Vec<ObstructionId> = combat.objects().map(|(id, _)| id).collect();
    assert_eq!(buildings, hulls, "combat keeps the hit points of exactly the buildings");
    for (id, b) in skirmish::construction::buildings(&construction) {
        let hull = combat.object(id).expect("a building's hit points");
        assert_eq!(hull.owner, b.owner);
        assert!(hull.hp >= 1 && hull.hp <= hull.max_hp, "building {id} has {} hp", hull.hp);
        assert!(world.nav().obstructions().contains_key(&id), "building {id} has no obstruction");
    }
    let sites: Vec<ObstructionId> = gathering.state().drop_sites.iter().copied().collect();
    let listed: Vec<ObstructionId> =
        gathering.objects().filter(|(_, o)| matches!(o, skirmish::gathering::Resource::DropSite { .. })).map(|(id, _)| id).collect();
    assert_eq!(sites, listed, "the world state lists exactly the drop-sites");
    world.check_invariants().unwrap();
    assert_eq!(world.state_digest(), world.state_digest_from_scratch());
}

/// Most turns in a row a unit may stand on an impassable navcell (walking out from under a
/// foundation laid over it). Random streams have shown 26 turns, for a unit whose path search was
/// held round other players' standing units after its dispersal; 60 leaves a margin.
pub const MAX_STRANDED_TURNS: u32 = 60;

/// Counts, per unit, the turns in a row it has stood on an impassable navcell.
#[derive(Default)]
pub struct Stranded(std::collections::BTreeMap<EntityId, u32>);

impl Stranded {
    /// Updates the counts after a turn and checks none exceeds [`MAX_STRANDED_TURNS`].
    pub fn check(&mut self, world: &World) {
        let pass = world.nav().class_nav(skirmish::UNIT_CLASS).expect("the unit class").pass_map();
        let mut next = std::collections::BTreeMap::new();
        for unit in world.units() {
            if !pass.is_passable(world.navcell_of(unit.pos)) {
                let turns = self.0.get(&unit.id).copied().unwrap_or(0) + 1;
                assert!(
                    turns <= MAX_STRANDED_TURNS,
                    "unit {} has stood on an impassable navcell for {turns} turns: {unit:?} {:?}",
                    unit.id,
                    world.game::<Combat>().unwrap().unit(unit.id)
                );
                next.insert(unit.id, turns);
            }
        }
        self.0 = next;
    }
}
