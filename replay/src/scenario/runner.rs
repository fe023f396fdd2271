//! Running the script: each turn's commands, and the ids learned from each turn's events.

use super::*;

/// Produces a scenario's commands turn by turn and learns, from each turn's report, the entity
/// ids of the groups spawned and the ids of the obstructions placed.
///
/// Call [`ScriptRunner::commands`] once per turn, in turn order, step the world with exactly those
/// commands, then [`ScriptRunner::observe`] the report. The mapping from events to groups relies
/// on the events each command caused (`TurnReport::caused`), so commands of other sources in the
/// same turn (bots, game commands) do not confuse it.
#[derive(Debug)]
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
    /// The bots playing seats, with the number of commands each has given.
    bots: Vec<(PlayerId, Box<dyn crate::rules::Bot>, u32)>,
}

/// The `seq` of a bot's first command; its later ones count up. Below the rules' actions
/// (`sim::rules::ACTION_SEQ_BASE`) and above any scripted command's.
pub const BOT_SEQ_BASE: u32 = 1 << 30;

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
            bots: match &scenario.rules {
                Some(rules) => scenario.bots.iter().filter_map(|&(p, seed)| Some((p, rules.bot(p, seed)?, 0))).collect(),
                None => Vec::new(),
            },
        }
    }

    /// The commands of `turn` (call once per turn in order), with their `(turn, player, seq)`.
    /// Entries of turns before `turn` that were never asked for are skipped.
    pub fn commands(&mut self, turn: u32) -> Vec<sim::Command> {
        self.commands_seeing(turn, None)
    }

    /// [`ScriptRunner::commands`]; with the world, a game command's `{"$group": …}` lists only
    /// the group's live units (a game's rules refuse dead ones).
    fn commands_seeing(&mut self, turn: u32, world: Option<&World>) -> Vec<sim::Command> {
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
        self.issued.iter().map(|&k| self.command(&sc.entries[k], world)).collect()
    }

    /// Without the scenario's bots for the players `seated` accepts: a networked game whose seats
    /// are played by people or by bots of their own gives the scenario's bots only the players
    /// nobody sits at, so no player is commanded from two places.
    #[must_use]
    pub fn without_bots_for(mut self, seated: impl Fn(PlayerId) -> bool) -> Self {
        self.bots.retain(|(player, _, _)| !seated(*player));
        self
    }

    /// The commands of the turn `world` is at: the script's ([`ScriptRunner::commands`]), then
    /// each bot's in player order, stamped with the turn, the bot's player and its own `seq`s
    /// from [`BOT_SEQ_BASE`].
    pub fn turn_commands(&mut self, world: &World) -> Vec<Command> {
        let turn = world.turn();
        let mut out = self.commands_seeing(turn, Some(world));
        for (player, bot, given) in &mut self.bots {
            for kind in bot.commands(world) {
                out.push(Command { turn, player: *player, seq: BOT_SEQ_BASE.saturating_add(*given), kind });
                *given = given.saturating_add(1);
            }
        }
        out
    }

    /// Learns spawned ids and placed obstruction ids from the turn's report; call after each step.
    pub fn observe(&mut self, report: &sim::TurnReport) {
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

    /// Learns what the turn's issued commands created, from the events each caused
    /// (`TurnReport::caused`), so commands of other sources in the same turn (bots, game
    /// commands whose rules spawn units) cannot be mistaken for them.
    fn observe_commands(&mut self, report: &sim::TurnReport) {
        let sc = self.scenario;
        let caused: std::collections::BTreeMap<_, _> = report.caused.iter().map(|&(key, start, end)| (key, (start, end))).collect();
        for k in std::mem::take(&mut self.issued) {
            let entry = &sc.entries[k];
            let key = (entry.turn, entry.player, entry.seq);
            let Some(&(start, end)) = caused.get(&key) else { continue };
            let events = report.events.get(start as usize..end as usize).unwrap_or_default();
            if events.iter().any(|e| matches!(e, Event::Rejected { .. })) {
                continue;
            }
            let spawned = events.iter().filter_map(|e| if let Event::Spawned { unit } = e { Some(*unit) } else { None });
            let placed = events.iter().find_map(|e| if let Event::ObstructionPlaced { id } = e { Some(*id) } else { None });
            let formed = events.iter().find_map(|e| if let Event::FormationCreated { formation } = e { Some(*formation) } else { None });
            let waiting = events.iter().find_map(|e| if let Event::SpawnWaiting { order, .. } = e { Some(*order) } else { None });
            match &entry.action {
                Action::Spawn(s) | Action::SpawnFromBuilding { spawn: s, .. } => {
                    if let Some(g) = s.group {
                        self.groups[g].extend(spawned);
                        if let Some(order) = waiting {
                            self.order_groups.insert(order, g);
                        }
                    }
                }
                Action::PlaceObstruction { name, .. } | Action::PlaceBuilding { name, .. } => {
                    if let (Some(k), Some(id)) = (name, placed) {
                        self.obstruction_ids[*k] = Some(id);
                    }
                }
                Action::Game { group: Some(g), .. } => self.groups[*g].extend(spawned),
                Action::FormGroup { name, .. } => {
                    if let Some(id) = formed {
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

    /// A game command with its references as the ids known now (a group never spawned becomes
    /// no ids, an obstruction never placed an id no obstruction has); a command the rules cannot
    /// read (which parsing prevents) becomes an empty payload, which the world refuses.
    fn game_command(&self, value: &serde_json::Value, world: Option<&World>) -> CommandKind {
        let live = |id: &&EntityId| world.is_none_or(|w| w.unit(**id).is_some());
        let sc = self.scenario;
        let id_json = |id: EntityId| serde_json::json!({"index": id.index, "generation": id.generation});
        let resolved = super::commands::game_ids::<()>(value, &mut |reference| {
            Ok(match reference {
                super::commands::GameRef::Group(name) => {
                    serde_json::Value::Array(self.group(name).iter().filter(live).map(|&id| id_json(id)).collect())
                }
                super::commands::GameRef::Unit(name) => id_json(self.group(name).iter().find(live).copied().unwrap_or(NO_ENTITY)),
                super::commands::GameRef::Obstruction(v) => {
                    let id = match v {
                        serde_json::Value::String(name) => match sc.obstruction_names.iter().position(|n| n == name) {
                            Some(k) => self.obstruction(ObsRef::Named(k)),
                            None => ObstructionId(u32::MAX),
                        },
                        other => ObstructionId(other.as_u64().and_then(|n| u32::try_from(n).ok()).unwrap_or(u32::MAX)),
                    };
                    serde_json::Value::from(id.0)
                }
                // Checked when the scenario was read.
                super::commands::GameRef::Number(v) => {
                    super::commands::game_number(v).map(|f| super::commands::json_of(&f)).map_err(drop)?
                }
                super::commands::GameRef::Point(v) => {
                    super::commands::game_point(v).map(|p| super::commands::json_of(&sc.world_pos(p))).map_err(drop)?
                }
            })
        });
        let (rules, payload) = match (resolved, &sc.rules) {
            (Ok(v), Some(rules)) => rules.command_from_json(&v).unwrap_or_default(),
            _ => (String::new(), Vec::new()),
        };
        CommandKind::Game { rules, payload }
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

    fn command(&self, entry: &Entry, world: Option<&World>) -> Command {
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
            Action::Game { value, .. } => self.game_command(value, world),
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
    for _ in 0..turns {
        let report = world.step(&script.turn_commands(world));
        script.observe(&report);
        each(&report);
    }
}
