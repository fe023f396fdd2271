//! The unit fields added for facing, velocity and held passages are state: in the per-turn digest
//! (incrementally and from scratch) and kept by save and load.

use pathing::classes::ClassSet;
use pathing::terrain::{GridSpec, Terrain};

use super::*;

/// A flat, open 32 × 32 m world with one unit that has walked three turns north-east.
fn walked_world() -> (World, EntityId) {
    let m = |n: i32| Fixed::from_num(n);
    let terrain = Terrain::flat(8, 8, m(4), m(12), Fixed::ZERO).unwrap();
    let desc = WorldDesc::new(GridSpec { width: 32, height: 32, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain);
    let mut world = World::new(desc, Vec::new(), Settings::default()).unwrap();
    let spawn = CommandKind::Spawn {
        class: pathing::PassClass::of(0),
        at: WorldPos::from_int(6, 6),
        count: 1,
        radius: Fixed::ONE / 2,
        speed: m(6),
        turn_rate: None,
    };
    world.step(&[Command { turn: 0, player: crate::PlayerId(1), seq: 0, kind: spawn }]);
    let id = world.units().next().unwrap().id;
    let go = CommandKind::Move { units: vec![id], goal: GoalSpec::Point(WorldPos::from_int(26, 20)), queue: false };
    world.step(&[Command { turn: 1, player: crate::PlayerId(1), seq: 0, kind: go }]);
    world.step(&[]);
    world.step(&[]);
    (world, id)
}

/// A field's name and a change to it.
type Change = (&'static str, fn(&mut Unit));

#[test]
fn facing_displacement_and_held_searches_are_hashed_and_saved() {
    let (world, id) = walked_world();
    let base = world.state_hash();
    let unit = world.unit(id).unwrap().clone();
    assert_ne!(unit.facing, crate::facing::INITIAL_FACING, "it turned toward its way");
    assert_ne!(unit.displacement, pathing::Vec2::new(Fixed::ZERO, Fixed::ZERO), "it moved");
    let changes: [Change; 3] = [
        ("facing", |u| u.facing = pathing::Vec2::new(Fixed::ZERO, -Fixed::ONE)),
        ("displacement", |u| u.displacement.x += Fixed::from_bits(1)),
        ("held_searches", |u| u.held_searches += 1),
    ];
    for (field, change) in changes {
        let mut copy = World::load(&world.save()).unwrap();
        assert_eq!(copy.state_hash(), base, "{field}: load(save) keeps the hash");
        assert_eq!(copy.unit(id), Some(&unit), "{field}: load(save) keeps the unit");
        change(copy.units.get_mut(id).unwrap());
        // A change made behind the world's back is made current as the end of a turn would.
        copy.refresh_digest();
        let changed = copy.state_hash();
        assert_ne!(changed, base, "{field}: a change changes the hash");
        assert_eq!(copy.state_digest_from_scratch().hash, changed, "{field}: the incremental digest is the one from scratch");
        let changed_unit = copy.unit(id).unwrap().clone();
        let again = World::load(&copy.save()).unwrap();
        assert_eq!(again.unit(id), Some(&changed_unit), "{field}: load(save) keeps the changed value");
        assert_eq!(again.state_hash(), changed);
    }
}
