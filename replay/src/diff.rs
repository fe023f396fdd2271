//! Field-level differences between two world snapshots, and a short summary of a world, for
//! `phalanx verify`, `phalanx diff` and `phalanx seek`.
//!
//! [`diff_snapshots`] compares two [`SnapshotData`] component by component, in the order of the
//! state digest (`settings`, `rng`, `ids`, `units`, `requests`, `obstructions`, `geometry`, after
//! `turn`), and names the entity and the field of every differing value. The `passability`
//! component is derived from `geometry` and `obstructions` and never stored, so a passability
//! divergence shows up as one of those two.
//!
//! Values print readably: fixed-point numbers as exact decimals (`12.5`, `-3.0625`), entity ids as
//! index `v` generation (`42v0`), orders as `point (40, 36)`. Units, settings, the random generator
//! and the id allocator are compared through their serde form (`serde_json::Value`), so a field
//! added to them is compared without a change here; a `Fixed` is recognised in that form by the
//! shape the `fixed` crate gives it, an object with the single key `bits` (pinned by a test). The
//! geometry, which the snapshot keeps as raw fixed-point bits, is decoded field by field below, and
//! any snapshot field this module does not know (one added to the format later) is still compared
//! generically, its raw bits printed as integers.

use std::collections::BTreeMap;
use std::fmt::Display;

use pathing::Fixed;
use serde::Serialize;
use serde_json::{Map, Value};
use sim::snapshot::{GameSnapshot, SnapshotData};
use sim::{EntityAllocator, EntityId, GoalSpec, PathRequest, PlayerId, Settings, SimRng, Target, Unit, UnitState, World};

use crate::rules::Rulesets;

/// One differing value.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FieldDiff {
    /// `turn`, or the state-digest component: `settings`, `rng`, `ids`, `units`, `requests`,
    /// `obstructions` or `geometry`.
    pub component: String,
    /// The entity within the component (`unit 42v0`, `obstruction 17`, `request 3`,
    /// `area "gate"`), or `None` for a field of the component itself.
    pub entity: Option<String>,
    /// The path inside the entity (`pos.x`, `waypoints[2].z`, `orders[0]`, `state`); `(exists)`
    /// when the entity is on one side only, `….len` when two lists differ in length.
    pub field: String,
    /// The left value, readable; `(none)` where the left side has no such value.
    pub left: String,
    /// The right value, readable; `(none)` where the right side has no such value.
    pub right: String,
}

/// The differences between two snapshots, in a fixed order: component (in the order of
/// [`FieldDiff::component`]), then entity (by id or name), then field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotDiff {
    /// The first differences, at most the `limit` given to [`diff_snapshots`].
    pub diffs: Vec<FieldDiff>,
    /// All differences found, including those beyond the limit.
    pub total: usize,
}

/// The differences between two snapshots: every differing value, at most `limit` of them kept
/// (all counted in [`SnapshotDiff::total`]). Units and obstructions are matched by id, areas by
/// name, path requests by position in the queue; a list of another length gives a `len`
/// difference and one per differing or missing element. Never panics, whatever the snapshots hold.
pub fn diff_snapshots(a: &SnapshotData, b: &SnapshotData, limit: usize) -> SnapshotDiff {
    diff_snapshots_with(a, b, limit, &Rulesets::none())
}

/// [`diff_snapshots`], comparing the game's state field by field through its ruleset (from
/// `rulesets`); without it, a game's values are compared as their encoded bytes.
pub fn diff_snapshots_with(a: &SnapshotData, b: &SnapshotData, limit: usize, rulesets: &Rulesets) -> SnapshotDiff {
    let mut sink = Sink { diff: SnapshotDiff::default(), limit };
    if a == b {
        return sink.diff;
    }
    leaf(&mut sink, &At::component("turn"), "turn", a.turn, b.turn);
    walk_typed(&mut sink, &At::component("settings"), &a.settings, &b.settings);
    walk_typed(&mut sink, &At::component("rng"), &a.rng, &b.rng);
    walk_typed(&mut sink, &At::component("ids"), &a.ids, &b.ids);
    diff_units(&mut sink, &a.units, &b.units);
    diff_requests(&mut sink, a, b);
    diff_obstructions(&mut sink, a, b);
    diff_geometry(&mut sink, a, b);
    diff_game(&mut sink, &a.games, &b.games, rulesets);
    sink.diff
}

/// The game's state: the rule modules first (`rules`), then each module's section in step order:
/// `NAME.units` by unit, `NAME.objects` by obstruction, `NAME.players` by player and `NAME.world`,
/// field by field in their serde form when `rulesets` knows a game of those modules.
fn diff_game(sink: &mut Sink, a: &[GameSnapshot], b: &[GameSnapshot], rulesets: &Rulesets) {
    if a == b {
        return;
    }
    let list = |g: &[GameSnapshot]| g.iter().map(|s| (s.rules.clone(), s.version)).collect::<Vec<_>>();
    let (la, lb) = (list(a), list(b));
    if la != lb {
        return leaf(sink, &At::component("rules"), "rules", sim::snapshot::rules_text(&la), sim::snapshot::rules_text(&lb));
    }
    let ruleset = rulesets.by_modules(&la);
    for (x, y) in a.iter().zip(b) {
        diff_section(sink, x, y, ruleset.map(|r| &**r));
    }
}

/// One module's section of two snapshots ([`diff_game`]).
fn diff_section(sink: &mut Sink, x: &GameSnapshot, y: &GameSnapshot, ruleset: Option<&dyn crate::rules::Ruleset>) {
    if x == y {
        return;
    }
    let name = &x.rules;
    let (units, objects, players, world) =
        (format!("{name}.units"), format!("{name}.objects"), format!("{name}.players"), format!("{name}.world"));
    let decoded = ruleset.and_then(|r| Some((r.section_json(x)?.ok()?, r.section_json(y)?.ok()?)));
    let Some((jx, jy)) = decoded else {
        // Unknown rules, or a value that does not decode: the encoded bytes, entity by entity.
        let bytes = |v: &[u8]| format!("{} encoded bytes, blake3 {}", v.len(), &sim::state_hash::hex(blake3::hash(v).as_bytes())[..16]);
        for ((id, occurrence), p, q) in matched(&x.units, &y.units, |u| u.0) {
            let at = At::entity(&units, format!("unit {}", id_text(id)), occurrence);
            leaf(sink, &at, "(encoded)", p.map_or(NONE.into(), |u| bytes(&u.1)), q.map_or(NONE.into(), |u| bytes(&u.1)));
        }
        for ((id, occurrence), p, q) in matched(&x.objects, &y.objects, |o| o.0) {
            let at = At::entity(&objects, format!("obstruction {id}"), occurrence);
            leaf(sink, &at, "(encoded)", p.map_or(NONE.into(), |o| bytes(&o.1)), q.map_or(NONE.into(), |o| bytes(&o.1)));
        }
        for k in 0..x.players.len().max(y.players.len()) {
            let at = At::entity(&players, format!("player {k}"), 0);
            leaf(
                sink,
                &at,
                "(encoded)",
                x.players.get(k).map_or(NONE.into(), |v| bytes(v)),
                y.players.get(k).map_or(NONE.into(), |v| bytes(v)),
            );
        }
        return leaf(sink, &At::component(&world), "(encoded)", bytes(&x.state), bytes(&y.state));
    };
    for ((id, occurrence), p, q) in matched(&jx.units, &jy.units, |u| u.0) {
        let at = At::entity(&units, format!("unit {}", id_text(id)), occurrence);
        match (p, q) {
            (Some(p), Some(q)) => walk(sink, &at, "", Some(&p.1), Some(&q.1)),
            (p, q) => sink.push(&at, "(exists)", p.map_or(NONE.into(), |u| render(&u.1)), q.map_or(NONE.into(), |u| render(&u.1))),
        }
    }
    for ((id, occurrence), p, q) in matched(&jx.objects, &jy.objects, |o| o.0) {
        let at = At::entity(&objects, format!("obstruction {id}"), occurrence);
        match (p, q) {
            (Some(p), Some(q)) => walk(sink, &at, "", Some(&p.1), Some(&q.1)),
            (p, q) => sink.push(&at, "(exists)", p.map_or(NONE.into(), |o| render(&o.1)), q.map_or(NONE.into(), |o| render(&o.1))),
        }
    }
    for k in 0..jx.players.len().max(jy.players.len()) {
        walk(sink, &At::entity(&players, format!("player {k}"), 0), "", jx.players.get(k), jy.players.get(k));
    }
    walk(sink, &At::component(&world), "", Some(&jx.world), Some(&jy.world));
}

/// How many units [`summary`] lists.
const SUMMARY_UNITS: usize = 8;

/// Where two replays of one game part, from their records alone (what `phalanx diff` and the
/// viewer report).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplaySplit<'r> {
    /// The record index of the first turn whose roots or commands differ.
    Turn(usize),
    /// Every common turn agrees, but the keyframes both hold at this turn differ (state the hash
    /// does not cover): A's and B's snapshot bytes.
    Keyframe(u32, &'r [u8], &'r [u8]),
    /// Every common turn and keyframe agrees.
    None,
}

/// The first place two replays differ ([`ReplaySplit`]).
pub fn replay_split<'r>(a: &'r crate::format::Replay, b: &'r crate::format::Replay) -> ReplaySplit<'r> {
    let common = a.turns.len().min(b.turns.len());
    if let Some(t) = (0..common).find(|&t| a.turns[t].roots != b.turns[t].roots || a.turns[t].commands != b.turns[t].commands) {
        return ReplaySplit::Turn(t);
    }
    for (k, sa) in &a.keyframes {
        if let Some((_, sb)) = b.keyframes.iter().find(|(kb, _)| kb == k)
            && sa != sb
        {
            return ReplaySplit::Keyframe(*k, sa, sb);
        }
    }
    ReplaySplit::None
}

/// The record index of the first turn at or after record `from` whose end state differs between
/// the two replays (its roots differ), among their common turns. After a divergence of commands
/// alone (a command that changed nothing yet, or was refused), this is where the games part.
pub fn first_state_split(a: &crate::format::Replay, b: &crate::format::Replay, from: usize) -> Option<usize> {
    let common = a.turns.len().min(b.turns.len());
    (from..common).find(|&t| a.turns[t].roots != b.turns[t].roots)
}

/// The first keyframe turn at or after `after` that both replays hold, with A's and B's bytes.
pub fn common_keyframe<'r>(a: &'r crate::format::Replay, b: &'r crate::format::Replay, after: u32) -> Option<(u32, &'r [u8], &'r [u8])> {
    a.keyframes
        .iter()
        .filter(|(k, _)| *k >= after)
        .find_map(|(k, sa)| b.keyframes.iter().find(|(kb, _)| kb == k).map(|(_, sb)| (*k, &sa[..], &sb[..])))
}

/// The field differences of two keyframe snapshots of turn `k` (A first), at most `limit` listed.
///
/// # Errors
/// [`crate::Error::Keyframe`] naming the keyframe when either does not decode.
pub fn keyframe_diff(k: u32, a: &[u8], b: &[u8], limit: usize, rulesets: &Rulesets) -> Result<SnapshotDiff, crate::Error> {
    let load = |bytes: &[u8]| sim::snapshot::unframe(bytes).map_err(|source| crate::Error::Keyframe { turn: k, source });
    Ok(diff_snapshots_with(&load(a)?, &load(b)?, limit, rulesets))
}

/// A short human summary of a world at its current turn: turn, state hash, units in all, per
/// player and per state, pending path requests, obstructions, and the first few units. Takes
/// `&mut` only because the state hash brings the world's cached digests up to date.
pub fn summary(world: &mut World) -> String {
    let hash = sim::state_hash::hex(&world.state_hash());
    let mut per_player: BTreeMap<PlayerId, usize> = BTreeMap::new();
    // Idle, waiting for a path, moving, blocked.
    let mut per_state = [0usize; 4];
    for unit in world.units() {
        *per_player.entry(unit.owner).or_default() += 1;
        per_state[match unit.state {
            UnitState::Idle => 0,
            UnitState::WaitingForPath => 1,
            UnitState::Moving => 2,
            UnitState::Blocked(_) => 3,
        }] += 1;
    }
    let n_units: usize = per_player.values().sum();
    let players: Vec<String> = per_player.iter().map(|(player, n)| format!("player {player} {n}")).collect();
    let [idle, waiting, moving, blocked] = per_state;
    let n_short = world.requests().iter().filter(|r| r.short).count();
    let mut lines = vec![
        format!("turn {}", world.turn()),
        format!("state hash {hash}"),
        format!("units {n_units} ({}; idle {idle}, waiting for path {waiting}, moving {moving}, blocked {blocked})", players.join(", ")),
        format!("path requests {} (long {}, short {n_short})", world.requests().len(), world.requests().len() - n_short),
        format!("obstructions {}", world.nav().obstructions().len()),
    ];
    for unit in world.units().take(SUMMARY_UNITS) {
        lines.push(format!("  {}, waypoints left {}", unit_text(unit), unit.waypoints().len()));
    }
    if n_units > SUMMARY_UNITS {
        lines.push(format!("  and {} more", n_units - SUMMARY_UNITS));
    }
    lines.join("\n") + "\n"
}

/// Collects differences up to the limit and counts them all.
struct Sink {
    diff: SnapshotDiff,
    limit: usize,
}

/// Where the values being compared are: a component and an entity in it.
struct At {
    component: String,
    entity: Option<String>,
}

impl At {
    fn component(component: &str) -> Self {
        Self { component: component.to_owned(), entity: None }
    }

    /// An entity; `occurrence` > 0 only for a key repeated within one snapshot (a damaged one).
    fn entity(component: &str, name: String, occurrence: usize) -> Self {
        let entity = if occurrence == 0 { name } else { format!("{name} (#{})", occurrence + 1) };
        Self { component: component.to_owned(), entity: Some(entity) }
    }
}

impl Sink {
    fn push(&mut self, at: &At, field: &str, left: String, right: String) {
        self.diff.total += 1;
        if self.diff.diffs.len() < self.limit {
            let field = if field.is_empty() { "(value)" } else { field };
            self.diff.diffs.push(FieldDiff {
                component: at.component.clone(),
                entity: at.entity.clone(),
                field: field.to_owned(),
                left,
                right,
            });
        }
    }
}

const NONE: &str = "(none)";

/// One difference when the two values print differently (distinct values always do).
fn leaf(sink: &mut Sink, at: &At, field: &str, left: impl Display, right: impl Display) {
    let (left, right) = (left.to_string(), right.to_string());
    if left != right {
        sink.push(at, field, left, right);
    }
}

/// A list compared element by element: its length, `each` on differing elements present on both
/// sides, and `whole` for the elements only one side has.
fn list<T: PartialEq>(
    sink: &mut Sink,
    at: &At,
    path: &str,
    (a, b): (&[T], &[T]),
    mut each: impl FnMut(&mut Sink, &str, &T, &T),
    whole: impl Fn(&T) -> String,
) {
    leaf(sink, at, &join(path, "len"), a.len(), b.len());
    for k in 0..a.len().max(b.len()) {
        let path = format!("{path}[{k}]");
        match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) if x != y => each(sink, &path, x, y),
            (Some(_), Some(_)) => {}
            (x, y) => sink.push(at, &path, x.map_or(NONE.into(), &whole), y.map_or(NONE.into(), &whole)),
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// The serde form of a value (its `Debug` text in the impossible case that it has none).
fn value<T: Serialize + std::fmt::Debug>(x: &T) -> Value {
    serde_json::to_value(x).unwrap_or_else(|_| Value::String(format!("{x:?}")))
}

fn walk_typed<T: Serialize + PartialEq + std::fmt::Debug>(sink: &mut Sink, at: &At, a: &T, b: &T) {
    if a != b {
        walk(sink, at, "", Some(&value(a)), Some(&value(b)));
    }
}

/// Compares two serde forms: objects key by key (sorted, whatever the map type), arrays element by
/// element, anything else (numbers, strings, fixed-point numbers, a change of enum variant) as one
/// value.
fn walk(sink: &mut Sink, at: &At, path: &str, a: Option<&Value>, b: Option<&Value>) {
    match (a, b) {
        (Some(x), Some(y)) if x == y => {}
        (Some(Value::Object(x)), Some(Value::Object(y))) if fixed_of(x).is_none() && fixed_of(y).is_none() && !variant_change(x, y) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                walk(sink, at, &join(path, key), x.get(key), y.get(key));
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            leaf(sink, at, &join(path, "len"), x.len(), y.len());
            for k in 0..x.len().max(y.len()) {
                walk(sink, at, &format!("{path}[{k}]"), x.get(k), y.get(k));
            }
        }
        _ => sink.push(at, path, a.map_or(NONE.into(), render), b.map_or(NONE.into(), render)),
    }
}

/// Two externally tagged enum values of different variants.
fn variant_change(x: &Map<String, Value>, y: &Map<String, Value>) -> bool {
    x.len() == 1 && y.len() == 1 && x.keys().ne(y.keys())
}

/// The `Fixed` whose serde form (the `fixed` crate's: `{"bits": raw}`) this object is, if it is one.
/// An `{x, z}` pair of fixed-point numbers, which [`value_text`] writes as `(x, z)`.
fn point_of(m: &Map<String, Value>) -> Option<(Fixed, Fixed)> {
    match (m.len(), m.get("x"), m.get("z")) {
        (2, Some(Value::Object(x)), Some(Value::Object(z))) => Some((fixed_of(x)?, fixed_of(z)?)),
        _ => None,
    }
}

/// The fields of `v` when [`value_text`] writes it as `{field: value, …}`; `None` for anything
/// it writes as one value (a fixed-point number or a point are objects too).
pub(crate) fn plain_fields(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object().filter(|m| fixed_of(m).is_none() && point_of(m).is_none())
}

fn fixed_of(object: &Map<String, Value>) -> Option<Fixed> {
    if object.len() != 1 {
        return None;
    }
    object.get("bits")?.as_i64().map(Fixed::from_bits)
}

/// A serde form as the tools print it (fixed-point numbers as decimals, points as `(x, z)`): what
/// the viewer shows of a game's fields.
pub fn value_text(v: &Value) -> String {
    render(v)
}

/// A serde form as compact text: fixed-point numbers as decimals, `{x, z}` pairs as `(x, z)`,
/// strings without quotes.
fn render(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            if let Some(f) = fixed_of(m) {
                return fixed_text(f);
            }
            if let Some((x, z)) = point_of(m) {
                return format!("({}, {})", fixed_text(x), fixed_text(z));
            }
            let fields: Vec<String> = m.iter().map(|(k, v)| format!("{k}: {}", render(v))).collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(render).collect::<Vec<_>>().join(", ")),
        Value::String(s) if !s.is_empty() => s.clone(),
        other => other.to_string(),
    }
}

/// A fixed-point number as its exact decimal, without trailing zeros (`12.5`, `-3.0625`, `40`).
fn fixed_text(value: Fixed) -> String {
    // Sixteen fractional bits need at most sixteen decimal places, so this rounds nothing.
    let text = format!("{value:.16}");
    let text = text.trim_end_matches('0');
    text.strip_suffix('.').unwrap_or(text).to_owned()
}

fn raw_text(bits: i64) -> String {
    fixed_text(Fixed::from_bits(bits))
}

fn point_text(p: pathing::WorldPos) -> String {
    format!("({}, {})", fixed_text(p.x), fixed_text(p.z))
}

fn raw_point_text(&(x, z): &(i64, i64)) -> String {
    format!("({}, {})", raw_text(x), raw_text(z))
}

fn id_text(id: EntityId) -> String {
    id.to_string()
}

fn goal_text(goal: &GoalSpec) -> String {
    match *goal {
        GoalSpec::Point(p) => format!("point {}", point_text(p)),
        GoalSpec::Circle { center, radius } => format!("circle {} radius {}", point_text(center), fixed_text(radius)),
        GoalSpec::Square { center, half } => format!("square {} half {}", point_text(center), fixed_text(half)),
        GoalSpec::Range { target, min, max, kind } => {
            let target = match target {
                Target::Unit(id) => format!("unit {}", id_text(id)),
                Target::Obstruction(id) => format!("obstruction {id}"),
            };
            format!("{} range {}..{} of {target}", kind.name(), fixed_text(min), fixed_text(max))
        }
    }
}

fn unit_text(unit: &Unit) -> String {
    format!("unit {} player {} at {} {:?}", id_text(unit.id), unit.owner, point_text(unit.pos), unit.state)
}

/// A unit's serde form with its orders and state as readable text.
fn unit_value(unit: &Unit) -> Value {
    let mut v = value(unit);
    if let Value::Object(m) = &mut v {
        m.insert("orders".into(), unit.orders.iter().map(|o| Value::String(goal_text(o))).collect());
        m.insert("state".into(), Value::String(format!("{:?}", unit.state)));
    }
    v
}

/// A key with its occurrence, and the item with that key on each side.
type Matched<'a, K, T> = ((K, usize), Option<&'a T>, Option<&'a T>);

/// Pairs the items of two lists by key, in key order; a key repeated within one list (only in a
/// damaged snapshot) pairs by occurrence.
fn matched<'a, T, K: Ord + Copy>(a: &'a [T], b: &'a [T], key: impl Fn(&'a T) -> K) -> Vec<Matched<'a, K, T>> {
    let mut pairs: BTreeMap<_, (Option<&'a T>, Option<&'a T>)> = BTreeMap::new();
    for (side, items) in [a, b].into_iter().enumerate() {
        let mut seen: BTreeMap<K, usize> = BTreeMap::new();
        for item in items {
            let k = key(item);
            let occurrence = seen.entry(k).or_default();
            let slot = pairs.entry((k, *occurrence)).or_default();
            *occurrence += 1;
            if side == 0 { slot.0 = Some(item) } else { slot.1 = Some(item) }
        }
    }
    pairs.into_iter().map(|(k, (x, y))| (k, x, y)).collect()
}

fn diff_units(sink: &mut Sink, a: &[Unit], b: &[Unit]) {
    for ((id, occurrence), x, y) in matched(a, b, |u| u.id) {
        let at = At::entity("units", format!("unit {}", id_text(id)), occurrence);
        match (x, y) {
            (Some(x), Some(y)) => walk_units(sink, &at, x, y),
            (x, y) => sink.push(&at, "(exists)", x.map_or(NONE.into(), unit_text), y.map_or(NONE.into(), unit_text)),
        }
    }
}

fn walk_units(sink: &mut Sink, at: &At, a: &Unit, b: &Unit) {
    if a != b {
        walk(sink, at, "", Some(&unit_value(a)), Some(&unit_value(b)));
    }
}

fn diff_requests(sink: &mut Sink, a: &SnapshotData, b: &SnapshotData) {
    let at = At::component("requests");
    leaf(sink, &at, "len", a.requests.len(), b.requests.len());
    leaf(sink, &at, "next_obstruction", a.next_obstruction, b.next_obstruction);
    let text = |r: &PathRequest| format!("unit {} {}", id_text(r.unit), if r.short { "short" } else { "long" });
    for k in 0..a.requests.len().max(b.requests.len()) {
        let at = At::entity("requests", format!("request {k}"), 0);
        match (a.requests.get(k), b.requests.get(k)) {
            (Some(x), Some(y)) => {
                leaf(sink, &at, "unit", id_text(x.unit), id_text(y.unit));
                leaf(sink, &at, "short", x.short, y.short);
            }
            (x, y) => sink.push(&at, "(exists)", x.map_or(NONE.into(), text), y.map_or(NONE.into(), text)),
        }
    }
}

/// The fields of a stored obstruction square, in their stored order.
const SQUARE_FIELDS: [&str; 8] = ["x", "z", "hw", "hh", "u.x", "u.z", "v.x", "v.z"];

fn diff_obstructions(sink: &mut Sink, a: &SnapshotData, b: &SnapshotData) {
    let text = |o: &sim::snapshot::StoredObstruction| {
        let [x, z, hw, hh, ..] = o.square.map(raw_text);
        format!("at ({x}, {z}) half {hw} x {hh}, flags {}", o.flags)
    };
    for ((id, occurrence), x, y) in matched(&a.obstructions, &b.obstructions, |o| o.id) {
        let at = At::entity("obstructions", format!("obstruction {id}"), occurrence);
        match (x, y) {
            (Some(x), Some(y)) => {
                for (field, (l, r)) in SQUARE_FIELDS.iter().zip(x.square.iter().zip(&y.square)) {
                    leaf(sink, &at, field, raw_text(*l), raw_text(*r));
                }
                leaf(sink, &at, "flags", x.flags, y.flags);
            }
            (x, y) => sink.push(&at, "(exists)", x.map_or(NONE.into(), text), y.map_or(NONE.into(), text)),
        }
    }
}

fn diff_geometry(sink: &mut Sink, a: &SnapshotData, b: &SnapshotData) {
    let at = At::component("geometry");
    let border = |(kind, _): (u8, u32)| match kind {
        0 => "none".to_owned(),
        1 => "square".to_owned(),
        2 => "circle".to_owned(),
        other => format!("unknown kind {other}"),
    };
    leaf(sink, &at, "border.kind", border(a.border), border(b.border));
    leaf(sink, &at, "border.width", a.border.1, b.border.1);
    if a.classes != b.classes {
        // The class file is JSON: compare it field by field when both sides parse.
        match (serde_json::from_str::<Value>(&a.classes), serde_json::from_str::<Value>(&b.classes)) {
            (Ok(x), Ok(y)) => walk(sink, &at, "classes", Some(&x), Some(&y)),
            _ => sink.push(&at, "classes", a.classes.clone(), b.classes.clone()),
        }
    }
    leaf(sink, &at, "grid.width", a.grid.0, b.grid.0);
    leaf(sink, &at, "grid.height", a.grid.1, b.grid.1);
    leaf(sink, &at, "grid.cell_size", raw_text(a.grid.2), raw_text(b.grid.2));
    leaf(sink, &at, "jump_table_classes", format!("{:#018b}", a.jump_table_classes), format!("{:#018b}", b.jump_table_classes));
    leaf(sink, &at, "landmark_classes", format!("{:#018b}", a.landmark_classes), format!("{:#018b}", b.landmark_classes));
    let vertices = |sink: &mut Sink, at: &At, path: &str, x: &Vec<(i64, i64)>, y: &Vec<(i64, i64)>| {
        let each = |sink: &mut Sink, path: &str, p: &(i64, i64), q: &(i64, i64)| {
            leaf(sink, at, &join(path, "x"), raw_text(p.0), raw_text(q.0));
            leaf(sink, at, &join(path, "z"), raw_text(p.1), raw_text(q.1));
        };
        list(sink, at, path, (x, y), each, raw_point_text);
    };
    let polygon_text = |p: &Vec<(i64, i64)>| format!("[{}]", p.iter().map(raw_point_text).collect::<Vec<_>>().join(", "));
    list(sink, &at, "obstacles", (&a.obstacles, &b.obstacles), |sink, path, x, y| vertices(sink, &at, path, x, y), polygon_text);
    leaf(sink, &at, "paddings.object", raw_text(a.paddings.0), raw_text(b.paddings.0));
    leaf(sink, &at, "paddings.boundary", raw_text(a.paddings.1), raw_text(b.paddings.1));
    let (ta, tb) = (&a.terrain, &b.terrain);
    leaf(sink, &at, "terrain.tiles_w", ta.0, tb.0);
    leaf(sink, &at, "terrain.tiles_h", ta.1, tb.1);
    leaf(sink, &at, "terrain.tile_size", raw_text(ta.2), raw_text(tb.2));
    let height = |sink: &mut Sink, path: &str, x: &i64, y: &i64| leaf(sink, &at, path, raw_text(*x), raw_text(*y));
    list(sink, &at, "terrain.heights", (&ta.3, &tb.3), height, |h| raw_text(*h));
    leaf(sink, &at, "terrain.water_level", raw_text(ta.4), raw_text(tb.4));
    walk_typed_rest(sink, &at, a, b);
    for ((name, occurrence), x, y) in matched(&a.areas, &b.areas, |area| area.0.as_str()) {
        let at = At::entity("geometry", format!("area {name:?}"), occurrence);
        match (x, y) {
            (Some(x), Some(y)) => {
                leaf(sink, &at, "available", x.2, y.2);
                vertices(sink, &at, "vertices", &x.1, &y.1);
            }
            (x, y) => {
                let text = |area: &sim::snapshot::StoredArea| {
                    format!("{} {}", if area.2 { "available" } else { "unavailable" }, polygon_text(&area.1))
                };
                sink.push(&at, "(exists)", x.map_or(NONE.into(), text), y.map_or(NONE.into(), text));
            }
        }
    }
}

/// The snapshot fields the code above does not know (one added to the format after it was
/// written), compared in their serde form so that no difference goes unreported: a copy of each
/// snapshot with every known field set to one fixed value leaves only those fields to differ.
fn walk_typed_rest(sink: &mut Sink, at: &At, a: &SnapshotData, b: &SnapshotData) {
    let rest = |data: &SnapshotData| {
        let mut rest = data.clone();
        rest.settings = Settings::default();
        rest.turn = 0;
        rest.grid = (0, 0, 0);
        rest.classes = String::new();
        rest.terrain = (0, 0, 0, Vec::new(), 0);
        rest.border = (0, 0);
        rest.areas = Vec::new();
        rest.obstacles = Vec::new();
        rest.paddings = (0, 0);
        rest.jump_table_classes = 0;
        rest.landmark_classes = 0;
        rest.obstructions = Vec::new();
        rest.next_obstruction = 0;
        rest.ids = EntityAllocator::default();
        rest.units = Vec::new();
        rest.requests = Vec::new();
        rest.rng = SimRng::new(0);
        // Compared field by field by `diff_game`.
        rest.games = Vec::new();
        rest
    };
    walk_typed(sink, at, &rest(a), &rest(b));
}

#[cfg(test)]
mod tests {
    use pathing::WorldPos;
    use pathing::decimal::parse_fixed;
    use pathing::refworld::{RefWorldParams, generate};
    use sim::{Command, CommandKind, Event};

    use super::*;

    /// A small world after five turns: three units of player 1 and two of player 2, all sent to
    /// one point on turn 1 (still walking at turn 8).
    fn small_world() -> (World, Vec<EntityId>) {
        let (desc, obstructions) = generate(&RefWorldParams::scaled(16, 1));
        let mut world = World::new(desc, obstructions, Settings::default()).unwrap();
        let spawn = |player, count| Command {
            turn: 0,
            player,
            seq: 0,
            kind: CommandKind::Spawn {
                class: pathing::PassClass::of(0),
                at: WorldPos::from_int(30, 30),
                count,
                radius: Fixed::ONE / 2,
                speed: Fixed::from_num(8),
                turn_rate: None,
            },
        };
        let report = world.step(&[spawn(PlayerId(1), 3), spawn(PlayerId(2), 2)]);
        let units: Vec<EntityId> =
            report.events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None }).collect();
        assert_eq!(units.len(), 5);
        let go = |player, units: &[EntityId]| Command {
            turn: 1,
            player,
            seq: 0,
            kind: CommandKind::Move { units: units.to_vec(), goal: GoalSpec::Point(WorldPos::from_int(52, 44)), queue: false },
        };
        world.step(&[go(PlayerId(1), &units[..3]), go(PlayerId(2), &units[3..])]);
        for _ in 0..3 {
            world.step(&[]);
        }
        (world, units)
    }

    fn snapshot(world: &World) -> SnapshotData {
        sim::snapshot::unframe(&world.save()).unwrap()
    }

    /// A copy of the world given `commands` on the next turn, then both stepped two more turns.
    fn diverged(commands: impl Fn(u32) -> Vec<Command>) -> (World, World) {
        let (mut left, _) = small_world();
        let mut right = World::load(&left.save()).unwrap();
        let turn = left.turn();
        left.step(&[]);
        right.step(&commands(turn));
        for _ in 0..2 {
            left.step(&[]);
            right.step(&[]);
        }
        (left, right)
    }

    const COMPONENTS: [&str; 8] = ["turn", "settings", "rng", "ids", "units", "requests", "obstructions", "geometry"];

    #[track_caller]
    fn check_order(diff: &SnapshotDiff) {
        let rank = |d: &FieldDiff| COMPONENTS.iter().position(|c| *c == d.component).expect("a known component");
        assert!(diff.diffs.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])), "{:#?}", diff.diffs);
    }

    #[test]
    fn fixed_serialises_as_bits_and_prints_as_an_exact_decimal() {
        // The generic walk recognises a `Fixed` by this form; if the `fixed` crate's serde form
        // changes (for example with its `serde-str` feature), `fixed_of` must change with it.
        let value = serde_json::to_value(Fixed::from_bits(-201_326)).unwrap();
        assert_eq!(value, serde_json::json!({ "bits": -201_326 }));
        assert_eq!(render(&value), fixed_text(Fixed::from_bits(-201_326)));
        assert_eq!(fixed_text(Fixed::from_bits(12 * 65_536 + 32_768)), "12.5");
        assert_eq!(fixed_text(Fixed::from_bits(-(3 * 65_536 + 4_096))), "-3.0625");
        assert_eq!(fixed_text(Fixed::from_num(40)), "40");
        assert_eq!(fixed_text(Fixed::ZERO), "0");
        assert_eq!(fixed_text(Fixed::from_bits(1)), "0.0000152587890625");
        assert_eq!(fixed_text(Fixed::MIN), "-140737488355328");
        assert_eq!(fixed_text(Fixed::MAX), "140737488355327.9999847412109375");
        for bits in [-1, 123_456_789, -1_073_741_823] {
            assert_eq!(parse_fixed(&fixed_text(Fixed::from_bits(bits))), Ok(Fixed::from_bits(bits)), "{bits}");
        }
    }

    #[test]
    fn identical_snapshots_have_no_differences() {
        let (world, _) = small_world();
        let diff = diff_snapshots(&snapshot(&world), &snapshot(&world), 100);
        assert_eq!(diff, SnapshotDiff { diffs: Vec::new(), total: 0 });
    }

    #[test]
    fn a_different_move_names_the_unit_and_its_fields() {
        let (_, units) = small_world();
        let detour = |turn| {
            let goal = GoalSpec::Point(WorldPos::from_int(20, 40));
            vec![Command { turn, player: PlayerId(1), seq: 0, kind: CommandKind::Move { units: vec![units[0]], goal, queue: false } }]
        };
        let (left, right) = diverged(detour);
        let diff = diff_snapshots(&snapshot(&left), &snapshot(&right), usize::MAX);
        check_order(&diff);
        assert_eq!(diff.total, diff.diffs.len());
        let first = diff.diffs.iter().position(|d| d.component == "units").expect("a unit difference");
        let of_unit: Vec<&FieldDiff> = diff.diffs.iter().filter(|d| d.entity.as_deref() == Some("unit 0v0")).collect();
        assert_eq!(diff.diffs[first].entity.as_deref(), Some("unit 0v0"), "{:#?}", diff.diffs);
        let order = of_unit.iter().find(|d| d.field == "orders[0]").expect("the order differs");
        assert_eq!((order.left.as_str(), order.right.as_str()), ("point (52, 44)", "point (20, 40)"));
        // Positions print as exact decimals: they parse back to the units' positions.
        let (l, r) = (left.unit(units[0]).unwrap().pos, right.unit(units[0]).unwrap().pos);
        assert_ne!(l, r);
        for (field, l, r) in [("pos.x", l.x, r.x), ("pos.z", l.z, r.z)] {
            if l != r {
                let d = of_unit.iter().find(|d| d.field == field).expect("the position differs");
                assert_eq!((parse_fixed(&d.left), parse_fixed(&d.right)), (Ok(l), Ok(r)));
            }
        }
        assert!(diff.diffs.iter().all(|d| !d.left.contains("bits") && !d.right.contains("bits")), "{:#?}", diff.diffs);
        assert!(diff.diffs.iter().all(|d| d.component == "units"), "{:#?}", diff.diffs);
    }

    #[test]
    fn the_limit_keeps_the_first_differences_and_counts_them_all() {
        let (_, units) = small_world();
        let stop = |turn| vec![Command { turn, player: PlayerId(1), seq: 0, kind: CommandKind::Stop { units: units[..3].to_vec() } }];
        let (left, right) = diverged(stop);
        let (a, b) = (snapshot(&left), snapshot(&right));
        let all = diff_snapshots(&a, &b, usize::MAX);
        assert!(all.total > 3, "{:#?}", all.diffs);
        let cut = diff_snapshots(&a, &b, 3);
        assert_eq!(cut.total, all.total);
        assert_eq!(cut.diffs, all.diffs[..3]);
        assert_eq!(diff_snapshots(&a, &b, 0), SnapshotDiff { diffs: Vec::new(), total: all.total });
    }

    #[test]
    fn a_unit_on_one_side_only_is_one_difference() {
        let (_, units) = small_world();
        let remove = |turn| vec![Command { turn, player: PlayerId(2), seq: 0, kind: CommandKind::Remove { units: vec![units[4]] } }];
        let (left, right) = diverged(remove);
        let diff = diff_snapshots(&snapshot(&left), &snapshot(&right), usize::MAX);
        check_order(&diff);
        let gone: Vec<&FieldDiff> = diff.diffs.iter().filter(|d| d.entity.as_deref() == Some("unit 4v0")).collect();
        assert_eq!(gone.len(), 1, "{:#?}", diff.diffs);
        assert_eq!((gone[0].component.as_str(), gone[0].field.as_str(), gone[0].right.as_str()), ("units", "(exists)", NONE));
        assert!(gone[0].left.starts_with("unit 4v0 player 2 at ("), "{}", gone[0].left);
        assert!(diff.diffs.iter().any(|d| d.component == "ids"), "{:#?}", diff.diffs);
    }

    #[test]
    fn geometry_differences_are_decoded() {
        let (world, _) = small_world();
        let a = snapshot(&world);
        let mut b = a.clone();
        b.terrain.3[5] += 1 << 15;
        b.areas.push(("gate".into(), vec![(0, 0), (1 << 16, 0), (0, 1 << 16)], true));
        b.obstructions.remove(0);
        b.grid.2 = 3 << 15;
        let diff = diff_snapshots(&a, &b, usize::MAX);
        check_order(&diff);
        let field = |component: &str, entity: Option<&str>, field: &str, left: &str, right: &str| FieldDiff {
            component: component.into(),
            entity: entity.map(str::to_owned),
            field: field.into(),
            left: left.into(),
            right: right.into(),
        };
        let height = raw_text(a.terrain.3[5]);
        let raised = raw_text(a.terrain.3[5] + (1 << 15));
        let removed = format!("obstruction {}", a.obstructions[0].id);
        assert_eq!(diff.total, 4, "{:#?}", diff.diffs);
        assert_eq!(diff.diffs[0].entity.as_deref(), Some(removed.as_str()));
        assert_eq!((diff.diffs[0].field.as_str(), diff.diffs[0].right.as_str()), ("(exists)", NONE));
        assert_eq!(diff.diffs[1], field("geometry", None, "grid.cell_size", &raw_text(a.grid.2), "1.5"));
        assert_eq!(diff.diffs[2], field("geometry", None, "terrain.heights[5]", &height, &raised));
        assert_eq!(diff.diffs[3], field("geometry", Some("area \"gate\""), "(exists)", NONE, "available [(0, 0), (1, 0), (0, 1)]"));
    }

    #[test]
    fn damaged_snapshots_are_compared_without_panicking() {
        let (world, _) = small_world();
        let a = snapshot(&world);
        let mut b = a.clone();
        b.units.push(b.units[0].clone());
        b.classes = "not json".into();
        b.border = (7, 3);
        b.terrain.3.truncate(2);
        b.areas = vec![("x".into(), Vec::new(), true), ("x".into(), Vec::new(), false)];
        let diff = diff_snapshots(&a, &b, usize::MAX);
        check_order(&diff);
        let has = |entity: Option<&str>, field: &str| diff.diffs.iter().any(|d| d.entity.as_deref() == entity && d.field == field);
        assert!(has(Some("unit 0v0 (#2)"), "(exists)"), "{:#?}", diff.diffs);
        assert!(has(None, "classes") && has(None, "border.kind") && has(None, "terrain.heights.len"));
        assert!(has(Some("area \"x\" (#2)"), "(exists)"));
        assert_eq!(diff_snapshots(&b, &b, usize::MAX).total, 0);
    }

    #[test]
    fn summary_counts_units_requests_and_obstructions() {
        let (mut world, _) = small_world();
        let text = summary(&mut world);
        let hash = sim::state_hash::hex(&world.state_hash());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "turn 5");
        assert_eq!(lines[1], format!("state hash {hash}"));
        assert!(lines[2].starts_with("units 5 (player 1 3, player 2 2; idle "), "{text}");
        assert_eq!(
            lines[3],
            format!(
                "path requests {} (long {}, short {})",
                world.requests().len(),
                world.requests().iter().filter(|r| !r.short).count(),
                world.requests().iter().filter(|r| r.short).count()
            )
        );
        assert_eq!(lines[4], format!("obstructions {}", world.nav().obstructions().len()));
        assert_eq!(lines.len(), 10, "{text}");
        assert!(lines[5].starts_with("  unit 0v0 player 1 at ("), "{text}");
        assert_eq!(summary(&mut world), text);
    }
}
