//! Running the script: each turn's commands, and the ids learned from each turn's events.

use super::*;

/// Produces a scenario's commands turn by turn and learns, from each turn's report, the entity
/// ids of the groups spawned and the ids of the obstructions placed.
///
/// Call [`ScriptRunner::commands`] once per turn, in turn order, step the world with exactly those
/// commands, then [`ScriptRunner::observe`] the report. The mapping from events to groups relies
/// on the world reporting the `Spawned` and `ObstructionPlaced` events of a turn's commands in
/// `(turn, player, seq)` order, which it does; commands of other sources mixed into the same turn
/// would confuse it.
#[derive(Debug, Clone)]
pub struct ScriptRunner<'a> {
    scenario: &'a Scenario,
    /// Next position in the scenario's schedule.
    cursor: usize,
    /// Entity ids per group, learned from `Spawned` events; removed units are dropped.
    groups: Vec<Vec<EntityId>>,
    /// Id per obstruction name, once known.
    obstruction_ids: Vec<Option<ObstructionId>>,
    /// Id per formation name, once formed.
    formation_ids: Vec<Option<FormationId>>,
    /// The group of each waiting building spawn order, by order id (learned from `SpawnWaiting`).
    order_groups: std::collections::BTreeMap<u32, usize>,
    /// Entries issued for `issued_turn`, in application order, awaiting `observe`.
    issued: Vec<usize>,
    issued_turn: Option<u32>,
}

/// An id no entity has (the world rejects it as unknown): what a name with no live unit becomes.
const NO_ENTITY: EntityId = EntityId { index: u32::MAX, generation: u32::MAX };

impl<'a> ScriptRunner<'a> {
    /// A runner at the start of `scenario`'s script, knowing only the initial obstructions' ids.
    pub(super) fn new(scenario: &'a Scenario) -> Self {
        ScriptRunner {
            scenario,
            cursor: 0,
            groups: vec![Vec::new(); scenario.group_names.len()],
            obstruction_ids: scenario.obstruction_initial.clone(),
            formation_ids: vec![None; scenario.formation_names.len()],
            order_groups: std::collections::BTreeMap::new(),
            issued: Vec::new(),
            issued_turn: None,
        }
    }

    /// The commands of `turn` (call once per turn in order), with their `(turn, player, seq)`.
    /// Entries of turns before `turn` that were never asked for are skipped.
    pub fn commands(&mut self, turn: u32) -> Vec<sim::command::Command> {
        let sc = self.scenario;
        while self.cursor < sc.schedule.len() && sc.entries[sc.schedule[self.cursor]].turn < turn {
            self.cursor += 1;
        }
        let start = self.cursor;
        while self.cursor < sc.schedule.len() && sc.entries[sc.schedule[self.cursor]].turn == turn {
            self.cursor += 1;
        }
        self.issued = sc.schedule[start..self.cursor].to_vec();
        self.issued_turn = Some(turn);
        self.issued.iter().map(|&k| self.command(&sc.entries[k])).collect()
    }

    /// Learns spawned ids and placed obstruction ids from the turn's report; call after each step.
    pub fn observe(&mut self, report: &sim::world::TurnReport) {
        if self.issued_turn == Some(report.turn) {
            self.observe_commands(report);
        }
        // Units of waiting building spawns appear in any later turn (and in the order's own turn,
        // after its command), so these are learned whatever was issued.
        for event in &report.events {
            match event {
                Event::SpawnedFromQueue { order, unit } => {
                    if let Some(&g) = self.order_groups.get(order) {
                        self.groups[g].push(*unit);
                    }
                }
                Event::SpawnCancelled { order, .. } => {
                    self.order_groups.remove(order);
                }
                _ => {}
            }
        }
    }

    /// Learns what the turn's issued commands created.
    fn observe_commands(&mut self, report: &sim::world::TurnReport) {
        let sc = self.scenario;
        let mut rejected = std::collections::BTreeSet::new();
        let mut spawned = Vec::new();
        let mut placed = Vec::new();
        let mut formed = Vec::new();
        // Per spawn command: the units that did not fit, and the order they wait in (if any).
        let mut short = std::collections::BTreeMap::new();
        for event in &report.events {
            match event {
                Event::SpawnShort { command, missing } => {
                    short.insert(*command, (*missing, None));
                }
                Event::SpawnWaiting { command, order, waiting, .. } => {
                    short.insert(*command, (*waiting, Some(*order)));
                }
                Event::Rejected { command, .. } => {
                    rejected.insert(*command);
                }
                Event::Spawned { unit } => spawned.push(*unit),
                Event::ObstructionPlaced { id } => placed.push(*id),
                Event::FormationCreated { formation } => formed.push(*formation),
                _ => {}
            }
        }
        let (mut spawned, mut placed, mut formed) = (spawned.into_iter(), placed.into_iter(), formed.into_iter());
        for k in std::mem::take(&mut self.issued) {
            let entry = &sc.entries[k];
            if rejected.contains(&(entry.turn, entry.player, entry.seq)) {
                continue;
            }
            match &entry.action {
                Action::Spawn(s) | Action::SpawnFromBuilding { spawn: s, .. } => {
                    let (missing, order) = short.get(&(entry.turn, entry.player, entry.seq)).copied().unwrap_or((0, None));
                    let placed = u32::from(s.count).saturating_sub(missing);
                    let ids: Vec<EntityId> = spawned.by_ref().take(placed as usize).collect();
                    if let Some(g) = s.group {
                        self.groups[g].extend(ids);
                        if let Some(order) = order {
                            self.order_groups.insert(order, g);
                        }
                    }
                }
                Action::PlaceObstruction { name, .. } | Action::PlaceBuilding { name, .. } => {
                    let id = placed.next();
                    if let (Some(k), Some(id)) = (name, id) {
                        self.obstruction_ids[*k] = Some(id);
                    }
                }
                Action::FormGroup { name, .. } => {
                    if let Some(id) = formed.next() {
                        self.formation_ids[*name] = Some(id);
                    }
                }
                Action::Remove { units } => {
                    let gone: Vec<EntityId> = units.iter().flat_map(|&g| self.groups[g].clone()).collect();
                    for ids in &mut self.groups {
                        ids.retain(|id| !gone.contains(id));
                    }
                }
                _ => {}
            }
        }
        self.issued_turn = None;
    }

    /// The entity ids known for a group (empty before it is spawned, or when it was refused).
    pub fn group(&self, name: &str) -> &[EntityId] {
        self.scenario.group_names.iter().position(|n| n == name).map_or(&[], |g| &self.groups[g])
    }

    fn units(&self, groups: &[usize]) -> Vec<EntityId> {
        let mut out: Vec<EntityId> = Vec::new();
        for &g in groups {
            for &id in &self.groups[g] {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        out
    }

    /// A goal in world coordinates, with its target's id as known now.
    fn goal(&self, goal: &Goal) -> GoalSpec {
        let sc = self.scenario;
        match *goal {
            Goal::Point(p) => GoalSpec::Point(sc.world_pos(p)),
            Goal::Circle { center, radius } => GoalSpec::Circle { center: sc.world_pos(center), radius },
            Goal::Square { center, half } => GoalSpec::Square { center: sc.world_pos(center), half },
            Goal::RangeUnit { group, min, max, kind } => {
                let target = self.groups[group].first().copied().unwrap_or(NO_ENTITY);
                GoalSpec::Range { target: Target::Unit(target), min, max, kind }
            }
            Goal::RangeObstruction { target, min, max, kind } => {
                GoalSpec::Range { target: Target::Obstruction(self.obstruction(target)), min, max, kind }
            }
        }
    }

    /// A formation's id, or one no formation has (the world rejects it) when it was not formed.
    fn formation(&self, k: usize) -> FormationId {
        self.formation_ids[k].unwrap_or(FormationId(u32::MAX))
    }

    fn obstruction(&self, r: ObsRef) -> ObstructionId {
        match r {
            ObsRef::Id(id) => ObstructionId(id),
            // Never handed out by the world, so a name whose placement was refused is rejected.
            ObsRef::Named(k) => self.obstruction_ids[k].unwrap_or(ObstructionId(u32::MAX)),
        }
    }

    fn command(&self, entry: &Entry) -> Command {
        let sc = self.scenario;
        let kind = match &entry.action {
            Action::Spawn(s) => CommandKind::Spawn {
                class: s.class,
                at: sc.world_pos(s.at),
                count: s.count,
                radius: s.radius,
                speed: s.speed,
                turn_rate: s.turn_rate,
            },
            Action::Move { units, goal, queue } => CommandKind::Move { units: self.units(units), goal: self.goal(goal), queue: *queue },
            Action::FormGroup { units, layout, .. } => CommandKind::FormGroup { units: self.units(units), layout: *layout },
            Action::MoveFormation { formation, goal } => {
                CommandKind::MoveFormation { formation: self.formation(*formation), goal: self.goal(goal) }
            }
            Action::SetLayout { formation, layout } => CommandKind::SetLayout { formation: self.formation(*formation), layout: *layout },
            Action::Disband { formation } => CommandKind::Disband { formation: self.formation(*formation) },
            Action::SetWaypoints(net) => CommandKind::SetWaypoints { net: sc.world_net(net) },
            Action::SetWaypointPriorities { class, reset, entries } => {
                CommandKind::SetWaypointPriorities { class: *class, reset: *reset, entries: entries.clone() }
            }
            Action::MoveByWaypoints { units, goal, queue } => {
                CommandKind::MoveByWaypoints { units: self.units(units), goal: sc.world_pos(*goal), queue: *queue }
            }
            Action::SpawnFromBuilding { spawn: s, building } => CommandKind::SpawnFromBuilding {
                building: self.obstruction(*building),
                class: s.class,
                count: s.count,
                radius: s.radius,
                speed: s.speed,
                turn_rate: s.turn_rate,
            },
            Action::CancelSpawns { building } => CommandKind::CancelSpawns { building: self.obstruction(*building) },
            Action::Stop { units } => CommandKind::Stop { units: self.units(units) },
            Action::Remove { units } => CommandKind::Remove { units: self.units(units) },
            Action::PlaceObstruction { square, flags, .. } => {
                CommandKind::PlaceObstruction { square: sc.world_square(square), flags: *flags }
            }
            Action::PlaceBuilding { class, square, builder, .. } => CommandKind::PlaceBuilding {
                class: *class,
                square: sc.world_square(square),
                builder: builder.map(|g| self.groups[g].first().copied().unwrap_or(NO_ENTITY)),
            },
            Action::SetObstructionFlags { target, flags } => {
                CommandKind::SetObstructionFlags { id: self.obstruction(*target), flags: *flags }
            }
            Action::RemoveObstruction { target } => CommandKind::RemoveObstruction { id: self.obstruction(*target) },
            Action::SetArea { name, available } => CommandKind::SetArea { name: name.clone(), available: *available },
            Action::EditTerrain { vx, vz, width, heights } => {
                CommandKind::EditTerrain { vx: *vx, vz: *vz, width: *width, heights: heights.clone() }
            }
        };
        Command { turn: entry.turn, player: entry.player, seq: entry.seq, kind }
    }
}

/// Steps a fresh `world` of `scenario` (at turn 0, from [`Scenario::world`]) through `turns`
/// turns of its script, calling `each` with every report: the loop every driver of a scenario
/// runs, for tests and tools.
pub fn run_turns(scenario: &Scenario, world: &mut World, turns: u32, mut each: impl FnMut(&TurnReport)) {
    let mut script = scenario.script();
    for turn in 0..turns {
        let report = world.step(&script.commands(turn));
        script.observe(&report);
        each(&report);
    }
}
