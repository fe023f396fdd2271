//! Building the world's geometry from the `map` field (generated, Moving AI, grid text, terrain or
//! polygons), and the classes given jump tables and landmark tables.

use serde_json::Value;

use super::file::{MapIn, TerrainIn};
use super::*;

/// What a `map` field builds.
pub(super) struct MapBuilt {
    pub(super) kind: MapKind,
    pub(super) desc: WorldDesc,
    pub(super) obstructions: Vec<(ObstructionId, Obstruction)>,
    pub(super) origin: WorldPos,
    pub(super) jump_tables: u16,
    pub(super) landmarks: u16,
}

fn check_cells(cx: &Cx, path: &str, width: u32, height: u32) -> Res<()> {
    let cells = u64::from(width) * u64::from(height);
    if cells > MAX_GRID_CELLS {
        return Err(cx.err(path, format!("expected a grid of at most {MAX_GRID_CELLS} navcells, found {width}x{height}")));
    }
    Ok(())
}

pub(super) fn parse_map_field(
    cx: &Cx,
    map: MapIn,
    path: &str,
    classes: &ClassSet,
    resolve: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Res<MapBuilt> {
    let MapIn { generated, movingai, grid, terrain, polygons, cell_size, jump_tables, landmarks } = map;
    let kinds = [
        ("generated", generated.is_some()),
        ("movingai", movingai.is_some()),
        ("grid", grid.is_some()),
        ("terrain", terrain.is_some()),
        ("polygons", polygons.is_some()),
    ];
    let kind = one_of(cx, path, &kinds)?;
    let p = join(path, kind);
    if kind != "movingai" && cell_size.is_some() {
        return Err(cx.err(&join(path, "cell_size"), "`cell_size` applies to `movingai` maps only (the other maps give their own)"));
    }
    let mut origin = WorldPos::new(Fixed::ZERO, Fixed::ZERO);
    let mut obstructions = Vec::new();
    let (kind, desc) = if let Some(g) = generated {
        let mut params = RefWorldParams::scaled(g.tiles.get(), g.seed.map_or(0, |s| s.get()));
        if let Some(b) = g.buildings {
            params.buildings = b.get();
        }
        if let Some(t) = g.trees {
            params.trees = t.get();
        }
        if let Some(c) = g.circular {
            params.circular = c;
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
    } else if let Some(r) = movingai {
        let src = parse_text_ref(cx, r, &p, resolve)?;
        let size = cell_size.unwrap_or(Fixed::ONE);
        if size <= Fixed::ZERO || size > MAX_CELL_SIZE {
            let cp = if cell_size.is_some() { join(path, "cell_size") } else { p.clone() };
            return Err(cx.err(&cp, format!("expected a navcell size in (0, {MAX_CELL_SIZE}], found {size}")));
        }
        let map = parse_map(&src.text).map_err(|e| parse_error(cx, &p, &src, "Moving AI map", &e))?;
        let (w, h) = (map.grid.width(), map.grid.height());
        check_cells(cx, &p, w, h)?;
        let desc = WorldDesc::from_cells(w, h, size, map.cell_kinds(), classes.clone())
            .map_err(|e| cx.err(&p, format!("expected a map that can become a world: {e}")))?;
        (MapKind::MovingAi { text: src.text, cell_size: size }, desc)
    } else if let Some(r) = grid {
        let src = parse_text_ref(cx, r, &p, resolve)?;
        let grid = parse_grid_text(&src.text).map_err(|e| parse_error(cx, &p, &src, "grid text", &e))?;
        let (w, h) = (grid.grid.width(), grid.grid.height());
        check_cells(cx, &p, w, h)?;
        origin = WorldPos::new(grid.min_x, grid.min_z);
        let desc = WorldDesc::from_cells(w, h, grid.cell_size, grid.cell_kinds(), classes.clone())
            .map_err(|e| cx.err(&p, format!("expected a grid that can become a world: {e}")))?;
        (MapKind::Grid { text: src.text }, desc)
    } else if let Some(r) = polygons {
        let src = parse_text_ref(cx, r, &p, resolve)?;
        let config = PolygonConfig::parse_json(&src.text).map_err(|e| {
            let (line, column) = match &e {
                ConfigError::Json { line, column, .. }
                | ConfigError::BadPolygon { line, column, .. }
                | ConfigError::DuplicateAreaName { line, column, .. } => (u32::try_from(*line).ok(), u32::try_from(*column).ok()),
                _ => (None, None),
            };
            text_err(cx, &p, &src, (line, column), format!("polygon config: {}", e.message()), Box::new(e))
        })?;
        let bounds = config.grid_bounds().map_err(|e| cx.err(&p, format!("polygon config: {e}")))?;
        check_cells(cx, &p, bounds.width, bounds.depth)?;
        let (desc, bounds) = WorldDesc::from_polygon_config(&config, classes.clone())
            .map_err(|e| cx.err(&p, format!("expected a polygon config that can become a world: {e}")))?;
        origin = WorldPos::new(bounds.min_x, bounds.min_z);
        (MapKind::Polygons { text: src.text }, desc)
    } else {
        let t = terrain.unwrap_or_else(|| unreachable!("one_of found one of the five kinds"));
        let spec = parse_terrain(cx, *t, &p)?;
        let desc = terrain_desc(cx, &p, &spec, classes)?;
        (MapKind::Terrain(Box::new(spec)), desc)
    };
    let cells = u64::from(desc.grid.width) * u64::from(desc.grid.height);
    let jump_tables = match jump_tables {
        Some(list) => {
            let p = join(path, "jump_tables");
            class_mask(cx, &list.0, &p, classes, (cells, sim::snapshot::MAX_JUMP_TABLE_CELLS, "jump tables"), cx.version < 4)?
        }
        None => 0,
    };
    let landmarks = match landmarks {
        Some(list) => {
            let p = join(path, "landmarks");
            cx.since(&p, "map.landmarks")?;
            class_mask(cx, &list.0, &p, classes, (cells, sim::snapshot::MAX_LANDMARK_CELLS, "landmark tables"), false)?
        }
        None => 0,
    };
    Ok(MapBuilt { kind, desc, obstructions, origin, jump_tables, landmarks })
}

/// A list of classes as a bit mask, limited as a snapshot limits the tables built for them
/// (`World::load` refuses more), counted as it counts them: `limit` navcells in all (for `cells`
/// navcells, tables named `what`). Foundation classes are refused, or dropped when
/// `drop_foundation` (older files).
fn class_mask(
    cx: &Cx,
    list: &[Value],
    p: &str,
    classes: &ClassSet,
    (cells, limit, what): (u64, u64, &str),
    drop_foundation: bool,
) -> Res<u16> {
    let mut mask = 0u16;
    for (k, item) in list.iter().enumerate() {
        let item_path = format!("{p}[{k}]");
        let class = parse_class(cx, item, &item_path, classes)?;
        let def = classes.get(class);
        if def.is_some_and(|d| d.obstructions == ObstructionMode::Foundation) {
            if drop_foundation {
                continue; // what versions before 4 did with them: no table, so no bit
            }
            let name = def.map_or("", |d| d.name.as_str());
            return Err(cx.err(
                &item_path,
                format!("expected a movement class, found the foundation class {name:?} (only movement classes search)"),
            ));
        }
        mask |= class.bit();
    }
    if cells * u64::from(mask.count_ones()) > limit {
        return Err(cx.err(
            p,
            format!(
                "{what} for at most {limit} navcells in all (so that every state can be saved), found {} classes on {cells} navcells",
                mask.count_ones()
            ),
        ));
    }
    Ok(mask)
}

fn parse_error(cx: &Cx, path: &str, src: &TextRef, what: &str, e: &ParseError) -> ScenarioError {
    let found = if e.found == "<end of input>" { e.found.clone() } else { format!("{:?}", e.found) };
    text_err(cx, path, src, (Some(e.line), None), format!("{what}: expected {}, found {found}", e.expected), Box::new(e.clone()))
}

fn parse_polygon_vertices(cx: &Cx, points: Vec<Point>, path: &str) -> Res<Vec<WorldPos>> {
    let vertices: Vec<WorldPos> = points.into_iter().map(|p| p.0).collect();
    pathing::polygon::Polygon::new(vertices.clone()).map_err(|e| cx.err(path, format!("expected a simple polygon: {e}")))?;
    Ok(vertices)
}

fn parse_terrain(cx: &Cx, t: TerrainIn, path: &str) -> Res<TerrainSpec> {
    let tp = join(path, "tiles");
    let (tiles_w, tiles_h): (u32, u32) = (t.tiles[0].get(), t.tiles[1].get());
    let vertices = (u64::from(tiles_w) + 1) * (u64::from(tiles_h) + 1);
    if vertices > MAX_TERRAIN_VERTICES {
        return Err(cx.err(&tp, format!("expected at most {MAX_TERRAIN_VERTICES} terrain vertices, found {vertices}")));
    }
    let tile_size = t.tile_size.unwrap_or(Fixed::from_num(4));
    let heights = match (t.heights, t.flat) {
        (Some(_), Some(_)) => return Err(cx.err(&join(path, "flat"), "expected `heights` or `flat`, not both")),
        (Some(list), None) => {
            if list.0.len() as u64 != vertices {
                return Err(cx.err(
                    &join(path, "heights"),
                    format!("expected {vertices} heights ((tiles across + 1) × (tiles down + 1)), found {}", list.0.len()),
                ));
            }
            Heights::List(list.0.into_iter().map(|d| d.0).collect())
        }
        (None, Some(h)) => Heights::Flat(h),
        (None, None) => Heights::Flat(Fixed::ZERO),
    };
    let water_level = t.water_level.unwrap_or(Fixed::ZERO);
    let cell_size = t.cell_size.unwrap_or(Fixed::ONE);
    let border = match t.border {
        None => MapBorder::None,
        Some(b) => {
            let width = b.width.map_or(0, |w| w.get());
            match b.shape.0.as_str() {
                "none" => MapBorder::None,
                "square" => MapBorder::Square { width },
                "circle" => MapBorder::Circle { width },
                other => {
                    return Err(
                        cx.err(&join(path, "border.shape"), format!("expected \"none\", \"square\" or \"circle\", found {other:?}"))
                    );
                }
            }
        }
    };
    let mut areas: Vec<AreaSpec> = Vec::new();
    for (k, a) in t.areas.map(|a| a.0).unwrap_or_default().into_iter().enumerate() {
        let ap = format!("{path}.areas[{k}]");
        let name = a.name.0;
        if areas.iter().any(|other| other.name == name) {
            return Err(cx.err(&join(&ap, "name"), format!("expected a unique area name, found {name:?} a second time")));
        }
        let vertices = parse_polygon_vertices(cx, a.vertices.0, &join(&ap, "vertices"))?;
        areas.push(AreaSpec { name, vertices, available: a.available.unwrap_or(true) });
    }
    let mut obstacles = Vec::new();
    for (k, o) in t.obstacles.map(|o| o.0).unwrap_or_default().into_iter().enumerate() {
        let op = format!("{path}.obstacles[{k}]");
        let vertices = parse_polygon_vertices(cx, o.vertices.0, &join(&op, "vertices"))?;
        obstacles.push(ObstacleSpec { name: o.name.map(|n| n.0), vertices });
    }
    let object_padding = t.object_padding.unwrap_or(Fixed::ZERO);
    let boundary_padding = t.boundary_padding.unwrap_or(Fixed::ZERO);
    for (key, v) in [("object_padding", object_padding), ("boundary_padding", boundary_padding)] {
        if v < Fixed::ZERO {
            return Err(cx.err(&join(path, key), format!("expected a padding ≥ 0, found {v}")));
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

fn terrain_desc(cx: &Cx, path: &str, spec: &TerrainSpec, classes: &ClassSet) -> Res<WorldDesc> {
    let terrain = match &spec.heights {
        Heights::Flat(h) => Terrain::flat(spec.tiles_w, spec.tiles_h, spec.tile_size, *h, spec.water_level),
        Heights::List(list) => Terrain::new(spec.tiles_w, spec.tiles_h, spec.tile_size, list.clone(), spec.water_level),
    }
    .map_err(|e| cx.err(path, format!("expected a valid heightmap: {e}")))?;
    let grid = GridSpec::covering(&terrain, spec.cell_size).map_err(|e| cx.err(path, format!("expected a valid grid: {e}")))?;
    check_cells(cx, path, grid.width, grid.height)?;
    let polygon = |vertices: &[WorldPos]| {
        pathing::polygon::Polygon::new(vertices.to_vec()).map_err(|e| cx.err(path, format!("expected a simple polygon: {e}")))
    };
    let areas = spec
        .areas
        .iter()
        .map(|a| Ok(NavArea { name: a.name.clone(), polygon: polygon(&a.vertices)?, available: a.available }))
        .collect::<Res<Vec<_>>>()?;
    let obstacles = spec.obstacles.iter().map(|o| polygon(&o.vertices)).collect::<Res<Vec<_>>>()?;
    Ok(WorldDesc::new(grid, classes.clone(), terrain)
        .with_border(spec.border)
        .with_areas(areas)
        .with_obstacles(obstacles)
        .with_paddings(spec.object_padding, spec.boundary_padding))
}
