//! Building the world's geometry from the `map` field (generated, Moving AI, grid text, terrain or polygons).

use super::*;

/// What a `map` field builds.
pub(super) struct MapBuilt {
    pub(super) kind: MapKind,
    pub(super) desc: WorldDesc,
    pub(super) obstructions: Vec<(u32, Obstruction)>,
    pub(super) origin: WorldPos,
    pub(super) jump_tables: u16,
    pub(super) landmarks: u16,
}

pub(super) fn check_cells(cx: &Cx, node: &Node, path: &str, width: u32, height: u32) -> Res<()> {
    let cells = u64::from(width) * u64::from(height);
    if cells > MAX_GRID_CELLS {
        return Err(cx.err(node, path, format!("expected a grid of at most {MAX_GRID_CELLS} navcells, found {width}x{height}")));
    }
    Ok(())
}

pub(super) fn parse_map_field(
    cx: &Cx,
    node: &Node,
    path: &str,
    classes: &ClassSet,
    version: u64,
    resolve: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Res<MapBuilt> {
    let o = cx.obj(node, path, &["generated", "movingai", "grid", "terrain", "polygons", "cell_size", "jump_tables", "landmarks"])?;
    let (kind, n, p) = o.one_of(cx, MAP_KINDS)?;
    if kind != "movingai"
        && let Some((cn, cp)) = o.get("cell_size")
    {
        return Err(cx.err(cn, &cp, "`cell_size` applies to `movingai` maps only (the other maps give their own)"));
    }
    let mut origin = WorldPos::new(Fixed::ZERO, Fixed::ZERO);
    let mut obstructions = Vec::new();
    let (kind, desc) = match kind {
        "generated" => {
            let g = cx.obj(n, &p, &["tiles", "seed", "buildings", "trees", "circular"])?;
            let (tn, tp) = g.req(cx, "tiles")?;
            let tiles = cx.u32_in(tn, &tp, 16, MAX_GENERATED_TILES)?;
            let seed = match g.get("seed") {
                Some((n, p)) => cx.uint(n, &p, u64::MAX)?,
                None => 0,
            };
            let mut params = RefWorldParams::scaled(tiles, seed);
            if let Some((n, p)) = g.get("buildings") {
                params.buildings = cx.u32_in(n, &p, 0, 10_000)?;
            }
            if let Some((n, p)) = g.get("trees") {
                params.trees = cx.u32_in(n, &p, 0, 100_000)?;
            }
            if let Some((n, p)) = g.get("circular") {
                params.circular = cx.boolean(n, &p)?;
            }
            let (mut desc, obs) = generate(&params);
            desc.classes = classes.clone();
            obstructions = obs;
            let kind = MapKind::Generated {
                tiles: params.tiles,
                seed: params.seed,
                buildings: params.buildings,
                trees: params.trees,
                circular: params.circular,
            };
            (kind, desc)
        }
        "movingai" => {
            let src = parse_text_ref(cx, n, &p, resolve)?;
            let cell_size = o.fixed_or(cx, "cell_size", Fixed::ONE)?;
            if cell_size <= Fixed::ZERO || cell_size > MAX_CELL_SIZE {
                let (cn, cp) = o.get("cell_size").unwrap_or((n, p.clone()));
                return Err(cx.err(cn, &cp, format!("expected a navcell size in (0, {MAX_CELL_SIZE}], found {cell_size}")));
            }
            let map = parse_map(&src.text).map_err(|e| parse_error(cx, n, &p, &src, "Moving AI map", &e))?;
            let (w, h) = (map.grid.width(), map.grid.height());
            check_cells(cx, n, &p, w, h)?;
            let desc = WorldDesc::from_cells(w, h, cell_size, map.cell_kinds(), classes.clone())
                .map_err(|e| cx.err(n, &p, format!("expected a map that can become a world: {e}")))?;
            (MapKind::MovingAi { text: src.text, cell_size }, desc)
        }
        "grid" => {
            let src = parse_text_ref(cx, n, &p, resolve)?;
            let grid = parse_grid_text(&src.text).map_err(|e| parse_error(cx, n, &p, &src, "grid text", &e))?;
            let (w, h) = (grid.grid.width(), grid.grid.height());
            check_cells(cx, n, &p, w, h)?;
            origin = WorldPos::new(grid.min_x, grid.min_z);
            let desc = WorldDesc::from_cells(w, h, grid.cell_size, grid.cell_kinds(), classes.clone())
                .map_err(|e| cx.err(n, &p, format!("expected a grid that can become a world: {e}")))?;
            (MapKind::Grid { text: src.text }, desc)
        }
        "polygons" => {
            let src = parse_text_ref(cx, n, &p, resolve)?;
            let config = PolygonConfig::parse_json(&src.text).map_err(|e| {
                let (line, column) = match &e {
                    ConfigError::Json { line, column, .. }
                    | ConfigError::BadPolygon { line, column, .. }
                    | ConfigError::DuplicateAreaName { line, column, .. } => (u32::try_from(*line).ok(), u32::try_from(*column).ok()),
                    _ => (None, None),
                };
                let message = match &e {
                    ConfigError::Json { message, .. } => message.clone(),
                    other => {
                        let text = other.to_string();
                        // Drop the position prefix that Display adds; it is in line and column.
                        match text.split_once(": ") {
                            Some((head, rest)) if head.starts_with("line ") => rest.to_string(),
                            _ => text,
                        }
                    }
                };
                text_err(cx, n, &p, &src, line, column, format!("polygon config: {message}"))
            })?;
            let bounds = config.grid_bounds().map_err(|e| cx.err(n, &p, format!("polygon config: {e}")))?;
            check_cells(cx, n, &p, bounds.width, bounds.depth)?;
            let (desc, bounds) = WorldDesc::from_polygon_config(&config, classes.clone())
                .map_err(|e| cx.err(n, &p, format!("expected a polygon config that can become a world: {e}")))?;
            origin = WorldPos::new(bounds.min_x, bounds.min_z);
            (MapKind::Polygons { text: src.text }, desc)
        }
        _ => {
            let spec = parse_terrain(cx, n, &p)?;
            let desc = terrain_desc(cx, n, &p, &spec, classes)?;
            (MapKind::Terrain(Box::new(spec)), desc)
        }
    };
    let cells = u64::from(desc.grid.width) * u64::from(desc.grid.height);
    let jump_tables = match o.get("jump_tables") {
        Some((n, p)) => class_mask(cx, n, &p, classes, cells, sim::snapshot::MAX_JUMP_TABLE_CELLS, "jump tables", version < 4)?,
        None => 0,
    };
    let landmarks = match o.get("landmarks") {
        Some((n, p)) => cx
            .since(n, &p, "map.landmarks")
            .and_then(|()| class_mask(cx, n, &p, classes, cells, sim::snapshot::MAX_LANDMARK_CELLS, "landmark tables", false))?,
        None => 0,
    };
    Ok(MapBuilt { kind, desc, obstructions, origin, jump_tables, landmarks })
}

/// A list of classes as a bit mask, limited as a snapshot limits the tables built for them
/// (`World::load` refuses more), counted as it counts them: `limit` navcells in all.
/// Foundation classes are refused, or dropped when `drop_foundation` (older files).
#[allow(clippy::too_many_arguments)] // the limit's two numbers and its name come on top of the key
pub(super) fn class_mask(
    cx: &Cx,
    n: &Node,
    p: &str,
    classes: &ClassSet,
    cells: u64,
    limit: u64,
    what: &str,
    drop_foundation: bool,
) -> Res<u16> {
    let mut mask = 0u16;
    for (k, item) in cx.array(n, p, 16)?.iter().enumerate() {
        let item_path = format!("{p}[{k}]");
        let class = parse_class(cx, item, &item_path, classes)?;
        let def = PassClass::new(class).and_then(|c| classes.get(c));
        if def.is_some_and(|d| d.obstructions == ObstructionMode::Foundation) {
            if drop_foundation {
                continue; // what versions before 4 did with them: no table, so no bit
            }
            let name = def.map_or("", |d| d.name.as_str());
            return Err(cx.err(
                item,
                &item_path,
                format!("expected a movement class, found the foundation class {name:?} (only movement classes search)"),
            ));
        }
        mask |= 1 << class;
    }
    if cells * u64::from(mask.count_ones()) > limit {
        return Err(cx.err(
            n,
            p,
            format!(
                "{what} for at most {limit} navcells in all (so that every state can be saved), found {} classes on {cells} navcells",
                mask.count_ones()
            ),
        ));
    }
    Ok(mask)
}

pub(super) fn parse_error(cx: &Cx, node: &Node, path: &str, src: &TextRef, what: &str, e: &ParseError) -> ScenarioError {
    let found = if e.found == "<end of input>" { e.found.clone() } else { format!("{:?}", e.found) };
    text_err(cx, node, path, src, Some(e.line), None, format!("{what}: expected {}, found {found}", e.expected))
}

pub(super) fn parse_polygon_vertices(cx: &Cx, node: &Node, path: &str) -> Res<Vec<WorldPos>> {
    let items = cx.array(node, path, pathing::polygon::MAX_VERTICES)?;
    let vertices = items.iter().enumerate().map(|(k, v)| cx.pos(v, &format!("{path}[{k}]"))).collect::<Res<Vec<_>>>()?;
    pathing::polygon::Polygon::new(vertices.clone()).map_err(|e| cx.err(node, path, format!("expected a simple polygon: {e}")))?;
    Ok(vertices)
}

pub(super) fn parse_terrain(cx: &Cx, node: &Node, path: &str) -> Res<TerrainSpec> {
    let o = cx.obj(
        node,
        path,
        &[
            "tiles",
            "tile_size",
            "heights",
            "flat",
            "water_level",
            "cell_size",
            "border",
            "areas",
            "obstacles",
            "object_padding",
            "boundary_padding",
        ],
    )?;
    let (tn, tp) = o.req(cx, "tiles")?;
    let (tiles_w, tiles_h) = match &tn.val {
        Val::Arr(items) if items.len() == 2 => {
            (cx.u32_in(&items[0], &format!("{tp}[0]"), 1, 16_384)?, cx.u32_in(&items[1], &format!("{tp}[1]"), 1, 16_384)?)
        }
        other => return Err(cx.err(tn, &tp, format!("expected [tiles across, tiles down], found {}", other.kind()))),
    };
    let vertices = (u64::from(tiles_w) + 1) * (u64::from(tiles_h) + 1);
    if vertices > MAX_TERRAIN_VERTICES {
        return Err(cx.err(tn, &tp, format!("expected at most {MAX_TERRAIN_VERTICES} terrain vertices, found {vertices}")));
    }
    let tile_size = o.fixed_or(cx, "tile_size", Fixed::from_num(4))?;
    let heights = match (o.get("heights"), o.get("flat")) {
        (Some(_), Some((n, p))) => return Err(cx.err(n, &p, "expected `heights` or `flat`, not both")),
        (Some((n, p)), None) => {
            let items = cx.array(n, &p, MAX_TERRAIN_VERTICES as usize)?;
            if items.len() as u64 != vertices {
                return Err(cx.err(
                    n,
                    &p,
                    format!("expected {vertices} heights ((tiles across + 1) × (tiles down + 1)), found {}", items.len()),
                ));
            }
            Heights::List(items.iter().enumerate().map(|(k, v)| cx.fixed(v, &format!("{p}[{k}]"))).collect::<Res<Vec<_>>>()?)
        }
        (None, Some((n, p))) => Heights::Flat(cx.fixed(n, &p)?),
        (None, None) => Heights::Flat(Fixed::ZERO),
    };
    let water_level = o.fixed_or(cx, "water_level", Fixed::ZERO)?;
    let cell_size = o.fixed_or(cx, "cell_size", Fixed::ONE)?;
    let border = match o.get("border") {
        None => MapBorder::None,
        Some((n, p)) => {
            let b = cx.obj(n, &p, &["shape", "width"])?;
            let (sn, sp) = b.req(cx, "shape")?;
            let width = match b.get("width") {
                Some((n, p)) => cx.u32_in(n, &p, 0, 65_535)?,
                None => 0,
            };
            match cx.string(sn, &sp, MAX_NAME_BYTES)? {
                "none" => MapBorder::None,
                "square" => MapBorder::Square { width },
                "circle" => MapBorder::Circle { width },
                other => return Err(cx.err(sn, &sp, format!("expected \"none\", \"square\" or \"circle\", found {other:?}"))),
            }
        }
    };
    let mut areas: Vec<AreaSpec> = Vec::new();
    if let Some((n, p)) = o.get("areas") {
        for (k, item) in cx.array(n, &p, 4096)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let a = cx.obj(item, &path, &["name", "vertices", "available"])?;
            let (nn, np) = a.req(cx, "name")?;
            let name = cx.name(nn, &np)?.to_string();
            if areas.iter().any(|other| other.name == name) {
                return Err(cx.err(nn, &np, format!("expected a unique area name, found {name:?} a second time")));
            }
            let (vn, vp) = a.req(cx, "vertices")?;
            let vertices = parse_polygon_vertices(cx, vn, &vp)?;
            let available = match a.get("available") {
                Some((n, p)) => cx.boolean(n, &p)?,
                None => true,
            };
            areas.push(AreaSpec { name, vertices, available });
        }
    }
    let mut obstacles = Vec::new();
    if let Some((n, p)) = o.get("obstacles") {
        for (k, item) in cx.array(n, &p, 4096)?.iter().enumerate() {
            let path = format!("{p}[{k}]");
            let a = cx.obj(item, &path, &["name", "vertices"])?;
            let name = match a.get("name") {
                Some((n, p)) => Some(cx.name(n, &p)?.to_string()),
                None => None,
            };
            let (vn, vp) = a.req(cx, "vertices")?;
            obstacles.push(ObstacleSpec { name, vertices: parse_polygon_vertices(cx, vn, &vp)? });
        }
    }
    let object_padding = o.fixed_or(cx, "object_padding", Fixed::ZERO)?;
    let boundary_padding = o.fixed_or(cx, "boundary_padding", Fixed::ZERO)?;
    for (key, v) in [("object_padding", object_padding), ("boundary_padding", boundary_padding)] {
        if v < Fixed::ZERO {
            let (n, p) = o.get(key).unwrap_or((node, path.to_string()));
            return Err(cx.err(n, &p, format!("expected a padding ≥ 0, found {v}")));
        }
    }
    Ok(TerrainSpec {
        tiles_w,
        tiles_h,
        tile_size,
        heights,
        water_level,
        cell_size,
        border,
        areas,
        obstacles,
        object_padding,
        boundary_padding,
    })
}

pub(super) fn terrain_desc(cx: &Cx, node: &Node, path: &str, spec: &TerrainSpec, classes: &ClassSet) -> Res<WorldDesc> {
    let terrain = match &spec.heights {
        Heights::Flat(h) => Terrain::flat(spec.tiles_w, spec.tiles_h, spec.tile_size, *h, spec.water_level),
        Heights::List(list) => Terrain::new(spec.tiles_w, spec.tiles_h, spec.tile_size, list.clone(), spec.water_level),
    }
    .map_err(|e| cx.err(node, path, format!("expected a valid heightmap: {e}")))?;
    let grid = GridSpec::covering(&terrain, spec.cell_size).map_err(|e| cx.err(node, path, format!("expected a valid grid: {e}")))?;
    check_cells(cx, node, path, grid.width, grid.height)?;
    let polygon = |vertices: &[WorldPos]| {
        pathing::polygon::Polygon::new(vertices.to_vec()).map_err(|e| cx.err(node, path, format!("expected a simple polygon: {e}")))
    };
    let areas = spec
        .areas
        .iter()
        .map(|a| Ok(NavArea { name: a.name.clone(), polygon: polygon(&a.vertices)?, available: a.available }))
        .collect::<Res<Vec<_>>>()?;
    let obstacles = spec.obstacles.iter().map(|o| polygon(&o.vertices)).collect::<Res<Vec<_>>>()?;
    Ok(WorldDesc {
        grid,
        classes: classes.clone(),
        terrain,
        border: spec.border,
        areas,
        obstacles,
        object_padding: spec.object_padding,
        boundary_padding: spec.boundary_padding,
        jump_table_classes: 0,
        landmark_classes: 0,
        cells: Vec::new(),
    })
}
