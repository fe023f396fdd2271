//! Where an order sends a unit: a point, a circle, a square, or a range band round a target that
//! may move ([`GoalSpec`]), as commands give them and as units keep them in their orders.
//!
//! The goal of an order is its own module, below both commands and formations, because a unit's
//! orders, a formation's goal and a move command all hold one.

use pathing::{Fixed, ObstructionId, WorldPos};
use serde::{Deserialize, Serialize};

use crate::ids::EntityId;

/// Where a move order goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GoalSpec {
    /// A point.
    Point(WorldPos),
    /// Anywhere within `radius` of `center` (a unit in range of a target).
    Circle {
        /// Centre.
        center: WorldPos,
        /// Radius. `[Units: metres]`
        radius: Fixed,
    },
    /// Anywhere in an axis-aligned square of half-size `half` (a building's footprint plus range).
    Square {
        /// Centre.
        center: WorldPos,
        /// Half-size. `[Units: metres]`
        half: Fixed,
    },
    /// Within a range band of a target (an attack or gather range): at most `max` and at least
    /// `min` from the target's obstruction, with 0 A.D.'s range constraints (docs/motion-rules.md, "Range orders")
    /// (ranges measured between the edges of the two shapes, plus ε = 1/8 m; see
    /// "What a unit plans for" in the path phase, `sim/src/world/plan.rs`). The target is read where it is each time the unit plans, so a
    /// unit follows a moving target; the order fails when the target is gone.
    Range {
        /// What to keep in range.
        target: Target,
        /// The goal's shape against an obstruction target: square (melee), rounded square (ranged) or
        /// square kept clear of the footprint's dispersal zone (build). A unit target is always
        /// a circle.
        kind: RangeKind,
        /// Minimum range (a ballista's dead zone); 0 for none. `[Units: metres] [Limit: 0..=max]`
        min: Fixed,
        /// Maximum range. `[Units: metres] [Limit: 0..=256]`
        max: Fixed,
    },
}

/// How a range order against an obstruction is shaped (docs/motion-rules.md, "Range orders"), as
/// 0 A.D.'s design has square goals for melee attacks and building; a ranged attack takes every
/// point within its range of some part of the target. Against a unit target every kind is the
/// same circle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RangeKind {
    /// The target's square grown by the range: a melee attack or a gatherer.
    #[default]
    Melee,
    /// Every point within the range of some part of the target's square (the square grown by the
    /// range with round corners), so a unit already in range stays and one out of range goes to
    /// the nearest point in range: a ranged attack.
    Ranged,
    /// The target's square grown by the range, with at least half a navcell as minimum and a whole
    /// navcell as maximum range, so the builder ends outside the footprint's foundation-dispersal
    /// zone (docs/motion-rules.md, "Placement").
    Build,
}

impl RangeKind {
    /// The name in scenario files and in texts: `melee`, `ranged` or `build`.
    pub fn name(self) -> &'static str {
        match self {
            RangeKind::Melee => "melee",
            RangeKind::Ranged => "ranged",
            RangeKind::Build => "build",
        }
    }
}

/// What a range order is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// A unit (its obstruction square).
    Unit(EntityId),
    /// A static obstruction, by id (a building).
    Obstruction(ObstructionId),
}

impl GoalSpec {
    /// A point in the goal, where a unit aims its last waypoint; `None` for a range order, whose
    /// goal depends on where its target is.
    pub fn anchor(&self) -> Option<WorldPos> {
        match *self {
            GoalSpec::Point(p) => Some(p),
            GoalSpec::Circle { center, .. } | GoalSpec::Square { center, .. } => Some(center),
            GoalSpec::Range { .. } => None,
        }
    }
}

/// `unit 48v0` or `obstruction 7`.
impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Unit(id) => write!(f, "unit {id}"),
            Target::Obstruction(id) => write!(f, "obstruction {id}"),
        }
    }
}

/// A point goal as the point; the others name their shape.
impl std::fmt::Display for GoalSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            GoalSpec::Point(p) => write!(f, "{}", Coordinates(p)),
            GoalSpec::Circle { center, radius } => write!(f, "circle {} radius {radius}", Coordinates(center)),
            GoalSpec::Square { center, half } => write!(f, "square {} half-size {half}", Coordinates(center)),
            GoalSpec::Range { target, min, max, kind: RangeKind::Melee } => write!(f, "range {min}..{max} of {target}"),
            GoalSpec::Range { target, min, max, kind } => write!(f, "{} range {min}..{max} of {target}", kind.name()),
        }
    }
}

/// A point as `(x, z)` in metres, as every text of commands and goals writes one.
pub(crate) struct Coordinates(pub(crate) WorldPos);

impl std::fmt::Display for Coordinates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.0.x, self.0.z)
    }
}
