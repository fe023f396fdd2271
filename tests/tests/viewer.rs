//! The picture commands: `phalanx render` (a PNG of one turn, decoded back here) and `phalanx view`
//! (the self-contained HTML replay viewer) on the golden replays, on two replays of a game that
//! diverges, and the page itself in headless Chromium when `/usr/bin/chromium` is installed (CI
//! installs it, and under `CI=true` that one test fails without it; elsewhere it says it skipped).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use phalanx_tests::ci;
use replay::format::ReplayWriter;
use replay::picture::{self, Layers, PLAYER_COLOURS};
use replay::record::{build_world, header_for};
use replay::scenario::Scenario;
use replay::seek::{SeekTarget, restore};
use replay::viewer::{Source, ViewOptions, build_html};
use serde_json::Value;
use sim::{Command, CommandKind, PlayerId, World};

const GOLDEN: [&str; 5] = ["skirmish", "gates", "maze", "grid", "formations"];

/// Runs the command line in-process; returns (exit code, stdout, stderr). The only caller of `run`.
#[track_caller]
fn phalanx(args: &[&str]) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut argv = vec!["phalanx"];
    argv.extend_from_slice(args);
    let code = phalanx_cli::run(argv, &mut out, &mut err);
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

fn golden(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden").join(format!("{name}.replay")).display().to_string()
}

/// A folder for this test's files under `target/` (kept after the run, so the pictures and pages
/// can be looked at).
fn out_dir(what: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("viewer").join(what);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// A PNG decoded to RGB: (width, height, pixels).
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a buffer size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    buf.truncate(info.buffer_size());
    let channels = info.color_type.samples();
    let rgb = buf.chunks_exact(channels).flat_map(|px| [px[0], px[1], px[2]]).collect();
    (info.width, info.height, rgb)
}

/// How many pixels have exactly this colour.
fn count_colour(rgb: &[u8], colour: [u8; 3]) -> usize {
    rgb.chunks_exact(3).filter(|px| **px == colour).count()
}

/// The page's data object, unpacked (`replay::viewer::page_json`).
fn page_data(html: &str) -> Value {
    serde_json::from_str(&replay::viewer::page_json(html).expect("the page holds packed data")).expect("the page data is JSON")
}

/// A unit's game fields at `frame` from its changes in the page data, put together as the page's
/// `gameText` does (`Track::gm` in replay/src/viewer.rs): the last entry with every field at or
/// before the frame, the changes after it applied, then joined as the tools print a state.
fn game_text(data: &Value, changes: &Value, frame: u32) -> String {
    let list = changes.as_array().unwrap();
    let num = |v: &Value| v.as_i64().unwrap();
    // Each entry's frame is the step from the entry before's.
    let frames = list.iter().scan(0i64, |at, e| {
        *at += num(&e[0]);
        Some(*at)
    });
    let upto: Vec<&Value> = list.iter().zip(frames).take_while(|&(_, f)| f <= i64::from(frame)).map(|(e, _)| e).collect();
    let Some(full) = upto.iter().rposition(|e| num(&e[1]) >= 0) else { return String::new() };
    let mut texts: Vec<i64> = upto[full].as_array().unwrap()[2..].iter().map(num).collect();
    for e in &upto[full + 1..] {
        for pair in e.as_array().unwrap()[2..].chunks(2) {
            texts[num(&pair[0]) as usize] = num(&pair[1]);
        }
    }
    let strs = data["strs"].as_array().unwrap();
    let mut at = texts.iter().map(|&k| strs[k as usize].as_str().unwrap());
    let layout = data["layouts"][num(&upto[full][1]) as usize].as_array().unwrap();
    let parts: Vec<String> = layout
        .iter()
        .map(|entry| {
            let name = entry[0].as_str().unwrap();
            match entry[1].as_array() {
                None => format!("{name}: {}", at.next().unwrap()),
                Some(fields) => {
                    let inner: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.as_str().unwrap(), at.next().unwrap())).collect();
                    format!("{name}: {{{}}}", inner.join(", "))
                }
            }
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The world of a replay at the start of a turn (or its end).
fn world_at(file: &str, target: SeekTarget) -> World {
    let bytes = std::fs::read(file).unwrap();
    let restored = restore(&bytes[..], file, target, 1, &replay::rules::Rulesets::none()).unwrap();
    assert!(restored.divergence.is_none(), "{file} re-simulates to its hashes");
    restored.world
}

#[test]
fn render_draws_each_golden_replay_with_its_terrain_and_units() {
    let dir = out_dir("render");
    for name in GOLDEN {
        let file = golden(name);
        let png_path = dir.join(format!("{name}-turn20.png"));
        let (code, out, err) = phalanx(&["render", &file, "--turn", "20", "--out", &path_text(&png_path)]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("turn 20"), "{out}");
        let bytes = std::fs::read(&png_path).unwrap();
        let (w, h, rgb) = decode_png(&bytes);
        let world = world_at(&file, SeekTarget::Turn(20));
        let grid = world.nav().grid();
        let scale = picture::auto_scale(grid.width(), grid.height());
        assert_eq!((w, h), (grid.width() * scale, grid.height() * scale), "{name}: one navcell is {scale} pixels");
        assert!(w.max(h) >= 512, "{name}: small maps are scaled up to at least 512 pixels, got {w}x{h}");
        // The library call draws the same picture.
        let options = picture::Options { scale: None, layers: Layers::ALL };
        assert_eq!(picture::render_png(&world, &options), bytes, "{name}: the command line and render_png agree");
        // Every player with units has pixels of its colour; the terrain alone has none.
        let mut owners: Vec<PlayerId> = world.units().map(|u| u.owner).collect();
        owners.sort_unstable();
        owners.dedup();
        assert!(!owners.is_empty(), "{name} has units at turn 20");
        for owner in owners {
            let colour = picture::player_colour(owner);
            assert!(count_colour(&rgb, colour) > 0, "{name}: no pixel of player {owner}'s colour {colour:?}");
        }
        let terrain_only = picture::render_png(&world, &picture::Options { scale: None, layers: Layers::TERRAIN });
        let (_, _, plain) = decode_png(&terrain_only);
        for colour in &PLAYER_COLOURS[1..] {
            assert_eq!(count_colour(&plain, *colour), 0, "{name}: the terrain layer has no unit colours");
        }
        assert!(count_colour(&plain, picture::TerrainColour::Ground.rgb()) > 0, "{name}: passable ground is drawn");
        assert!(count_colour(&plain, picture::TerrainColour::Blocked.rgb()) > 0, "{name}: impassable terrain is drawn");
    }
}

#[test]
fn render_of_a_snapshot_draws_its_turn_and_refuses_another() {
    let dir = out_dir("snapshot");
    let world = world_at(&golden("skirmish"), SeekTarget::Turn(12));
    let snapshot = dir.join("skirmish-12.snapshot");
    std::fs::write(&snapshot, world.save()).unwrap();
    let png_path = path_text(&dir.join("snapshot.png"));
    let (code, _, err) = phalanx(&["render", &path_text(&snapshot), "--out", &png_path, "--scale", "2"]);
    assert_eq!(code, 0, "{err}");
    let (w, _, _) = decode_png(&std::fs::read(&png_path).unwrap());
    assert_eq!(w, world.nav().grid().width() * 2);
    let (code, _, err) = phalanx(&["render", &path_text(&snapshot), "--turn", "12", "--out", &png_path]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = phalanx(&["render", &path_text(&snapshot), "--turn", "13", "--out", &png_path]);
    assert_eq!(code, 2);
    assert!(err.contains("skirmish-12.snapshot") && err.contains("a snapshot of turn 12"), "{err}");
}

#[test]
fn render_and_view_refuse_unusable_input_with_exit_2_and_one_line_naming_the_file() {
    let dir = out_dir("bad");
    let garbage = dir.join("garbage.replay");
    std::fs::write(&garbage, b"this is not a replay at all").unwrap();
    let mut cut = std::fs::read(golden("skirmish")).unwrap();
    cut.truncate(40);
    let cut_path = dir.join("cut.replay");
    std::fs::write(&cut_path, &cut).unwrap();
    let missing = dir.join("missing.replay");
    let png_path = path_text(&dir.join("x.png"));
    let html_path = path_text(&dir.join("x.html"));
    let skirmish = golden("skirmish");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["render".into(), path_text(&garbage), "--out".into(), png_path.clone()], "garbage.replay"),
        (vec!["render".into(), path_text(&missing), "--out".into(), png_path.clone()], "missing.replay"),
        (vec!["render".into(), path_text(&cut_path), "--out".into(), png_path.clone()], "cut.replay"),
        (vec!["render".into(), skirmish.clone(), "--turn".into(), "9999".into(), "--out".into(), png_path.clone()], "beyond the replay"),
        (vec!["render".into(), skirmish.clone(), "--layers".into(), "units,colour".into(), "--out".into(), png_path.clone()], "--layers"),
        (vec!["view".into(), path_text(&garbage), "--out".into(), html_path.clone()], "garbage.replay"),
        (vec!["view".into(), path_text(&missing), "--out".into(), html_path.clone()], "missing.replay"),
        (vec!["view".into(), path_text(&cut_path), "--out".into(), html_path.clone()], "cut.replay"),
    ];
    for (args, named) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = phalanx(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(named), "{args:?}: the message names {named:?}: {err}");
    }
    // A replay and a snapshot together.
    let snapshot = dir.join("one.snapshot");
    std::fs::write(&snapshot, world_at(&skirmish, SeekTarget::Turn(3)).save()).unwrap();
    let (code, _, err) = phalanx(&["view", &skirmish, &path_text(&snapshot), "--out", &html_path]);
    assert_eq!(code, 2);
    assert!(err.contains("one.snapshot") && err.contains("one of each"), "{err}");
}

/// Checks a page: self-contained, and its data as the game was.
#[track_caller]
fn check_page(html: &str, file: &str) -> Value {
    assert!(html.starts_with("<!DOCTYPE html>"));
    for external in ["http://", "https://", "<link", "<script src", "url(", "@import"] {
        assert!(!html.contains(external), "{file}: the page refers to something outside it ({external:?})");
    }
    let data = page_data(html);
    assert!(data["bgs"][0][1].as_str().unwrap().starts_with("data:image/png;base64,"), "{file}: the map is embedded");
    let game = &data["games"][0];
    let end = world_at(file, SeekTarget::End);
    assert_eq!(game["frames"].as_u64().unwrap(), u64::from(end.turn()) + 1, "{file}: a frame per turn start and the end");
    assert_eq!(
        (data["w"].as_u64().unwrap(), data["h"].as_u64().unwrap()),
        (u64::from(end.nav().grid().width()), u64::from(end.nav().grid().height()))
    );
    // The last frame's positions, decoded from the deltas, are the world's at the end to within
    // the 1/16-navcell quantum.
    let cell = end.nav().grid().cell_size().to_num::<f64>();
    let tracks = game["units"].as_array().unwrap();
    let last = end.turn() as u64;
    let mut seen = 0;
    for u in end.units() {
        let id = format!("{}v{}", u.id.index, u.id.generation);
        let t = tracks.iter().find(|t| t["id"] == id.as_str()).unwrap_or_else(|| panic!("{file}: unit {id} has a track"));
        let first = t["f"].as_u64().unwrap();
        let xs = t["x"].as_array().unwrap();
        assert_eq!(first + xs.len() as u64 - 1, last, "{file}: unit {id} lasts to the end");
        let x: i64 = xs.iter().map(|v| v.as_i64().unwrap()).sum();
        let z: i64 = t["z"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).sum();
        let (ux, uz) = (u.pos.x.to_num::<f64>() / cell * 16.0, u.pos.z.to_num::<f64>() / cell * 16.0);
        assert!(
            (x as f64 - ux).abs() <= 0.5 && (z as f64 - uz).abs() <= 0.5,
            "{file}: unit {id} at ({x}, {z}) / 16, expected ({ux}, {uz})"
        );
        assert_eq!(t["o"].as_u64().unwrap(), u64::from(u.owner.0));
        // The last facing recorded is the world's, in whole degrees anticlockwise from east.
        // The page holds `[frame step, turn, …]`, each turn the degrees from the facing before.
        let turns = t["fa"].as_array().unwrap();
        assert!(!turns.is_empty() && turns.len() % 2 == 0, "{file}: unit {id} has a facing");
        let facing = turns.chunks(2).map(|e| e[1].as_u64().unwrap()).fold(0, |at, turn| (at + turn) % 360);
        let degrees = u.facing.z.to_num::<f64>().atan2(u.facing.x.to_num::<f64>()).to_degrees().rem_euclid(360.0);
        let off = (facing as f64 - degrees).abs();
        assert!(off.min(360.0 - off) <= 0.5, "{file}: unit {id} faces {facing}°, the world {degrees}°");
        seen += 1;
    }
    assert!(seen > 0, "{file}: units at the end");
    assert_eq!(game["obs"].as_array().unwrap().iter().filter(|o| o["e"].is_null()).count(), end.nav().obstructions().len());
    data
}

#[test]
fn view_builds_a_self_contained_page_for_each_golden_replay() {
    let dir = out_dir("view");
    for name in GOLDEN {
        let file = golden(name);
        let html_path = dir.join(format!("{name}.html"));
        let (code, out, err) = phalanx(&["view", &file, "--out", &path_text(&html_path)]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("frames"), "{out}");
        let html = std::fs::read_to_string(&html_path).unwrap();
        let data = check_page(&html, &file);
        assert!(data["div"].is_null(), "one file: no divergence");
        // The library call builds the same page.
        let bytes = std::fs::read(&file).unwrap();
        let options = ViewOptions { threads: 1, diff_limit: 100, ..ViewOptions::default() };
        assert_eq!(build_html(&[Source { name: &file, bytes: &bytes }], &options).unwrap(), html, "{name}");
        if name == "formations" {
            let forms = data["games"][0]["forms"].as_array().unwrap();
            assert_eq!(forms.len(), 3, "the three formations");
            assert!(forms.iter().all(|f| f["fr"].as_array().is_some_and(|fr| !fr.is_empty())), "slots recorded per frame");
        }
        if name == "gates" {
            assert!(data["bgs"].as_array().unwrap().len() > 1, "the bridge and the hill change the map mid-game");
        }
    }
}

/// The timeline and the player graphs of a game with rules, against a re-simulation of its
/// replay: every event it reports is in the page's timeline (but the three kinds of local
/// movement left off it), by kind and frame, with its unit's track; every player's numeric game
/// fields are in its series with the value they have at each frame.
/// A page's grid of class masks at `frame`, decoded from its stream as the page does
/// (`masksAt` in page.html): the frame-0 grid run-length coded (XOR the grid `base` codes at
/// frame 0, if given), then the changes up to `frame`.
fn masks_at(stream: &Value, frame: u64, base: Option<&Value>) -> Vec<u16> {
    let entries = stream.as_array().expect("a mask stream is a list");
    let mut grid = Vec::new();
    for pair in entries[0].as_array().unwrap()[1..].chunks(2) {
        grid.extend(std::iter::repeat_n(pair[0].as_u64().unwrap() as u16, pair[1].as_u64().unwrap() as usize));
    }
    if let Some(base) = base {
        for (cell, b) in grid.iter_mut().zip(masks_at(base, 0, None)) {
            *cell ^= b;
        }
    }
    for entry in &entries[1..] {
        let entry = entry.as_array().unwrap();
        if entry[0].as_u64().unwrap() > frame {
            break;
        }
        let mut at = 0usize;
        for pair in entry[1..].chunks(2) {
            at += pair[0].as_u64().unwrap() as usize;
            grid[at] = pair[1].as_u64().unwrap() as u16;
        }
    }
    grid
}

fn grid_masks(grid: &pathing::NavGrid) -> Vec<u16> {
    let w = grid.width();
    (0..grid.n_cells() as u32).map(|k| grid.blocked_mask(pathing::Navcell::new((k % w) as u16, (k / w) as u16))).collect()
}

#[test]
fn the_passability_layer_holds_the_re_simulated_grids_of_every_frame() {
    let rulesets = replay::rules::Rulesets::none().with(skirmish::tools::ruleset());
    let options = ViewOptions { threads: 1, diff_limit: 100, rulesets: rulesets.clone(), ..ViewOptions::default() };
    let mut changed = 0;
    for name in GOLDEN.iter().chain(&["skirmish-ai", "battle"]) {
        let file = golden(name);
        let bytes = std::fs::read(&file).unwrap();
        let html = build_html(&[Source { name: &file, bytes: &bytes }], &options).unwrap();
        let game = &page_data(&html)["games"][0];
        let replay = replay::format::Replay::read(&bytes[..]).unwrap();
        let mut world = replay::verify::initial_world(&replay.header, 1, &rulesets).unwrap();
        changed += game["pm"].as_array().unwrap().len() - 1;
        // Every class of the grid, whether a unit walks with it or not.
        let keep = (1u16 << world.nav().classes().len()) - 1;
        assert_eq!(game["pc"].as_u64(), Some(u64::from(keep)), "{name}: the classes kept");
        let grid_masks = |grid: &pathing::NavGrid| grid_masks(grid);
        for (turn, record) in replay.turns.iter().enumerate() {
            let frame = turn as u64;
            assert_eq!(
                masks_at(&game["pm"], frame, Some(&game["tm"])),
                grid_masks(world.nav().grid()),
                "{name}: the grid at frame {frame}"
            );
            assert_eq!(masks_at(&game["tm"], frame, None), grid_masks(world.nav().terrain_only()), "{name}: the terrain at frame {frame}");
            world.step(&record.commands);
        }
        let last = replay.turns.len() as u64;
        assert_eq!(masks_at(&game["pm"], last, Some(&game["tm"])), grid_masks(world.nav().grid()), "{name}: the grid at the last frame");
    }
    assert!(changed > 0, "some golden replay changes its grid after frame 0, so the changes are tested");
}

/// The world of a replay after its first `frames` turns, stepped from its start (so that derived
/// data such as formations' flow fields is as the viewer's capture had it).
fn world_after(file: &str, frames: u64) -> World {
    let rulesets = replay::rules::Rulesets::none().with(skirmish::tools::ruleset());
    let bytes = std::fs::read(file).unwrap();
    let replay = replay::format::Replay::read(&bytes[..]).unwrap();
    let mut world = replay::verify::initial_world(&replay.header, 1, &rulesets).unwrap();
    for record in replay.turns.iter().take(frames as usize) {
        world.step(&record.commands);
    }
    world
}

/// The page's hierarchy entry of `class` at `frame`: its chunks' region counts and its regions'
/// components.
fn regions_at(game: &Value, class: u8, frame: u64) -> Option<(Vec<u64>, Vec<u64>)> {
    let list = |v: &Value| v.as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect::<Vec<u64>>();
    game["hr"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["c"] == class && r["f"].as_u64().unwrap() <= frame)
        .map(|r| (list(&r["n"]), list(&r["k"])))
}

/// A formation's flow field at `frame` as the page holds it: its rectangle and each navcell's
/// step code, unpacked; `None` where it has none.
fn field_at(form: &Value, frame: u64) -> Option<([u32; 4], Vec<u8>)> {
    let entry = form["ff"].as_array().unwrap().iter().rev().find(|e| e[0].as_u64().unwrap() <= frame)?;
    let rect: Vec<u32> = entry[1].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    let rect = [rect[0], rect[1], rect[2], rect[3]];
    if rect[2] <= rect[0] {
        return None;
    }
    let codes = entry[2]
        .as_array()
        .unwrap()
        .chunks(2)
        .flat_map(|p| std::iter::repeat_n(p[0].as_u64().unwrap() as u8, p[1].as_u64().unwrap() as usize))
        .collect();
    Some((rect, codes))
}

/// The same from the engine: the field's rectangle and, per navcell in row order, 0 when it has
/// no distance, 5 at a goal navcell, else `3·(dz + 1) + dx + 2` for its step.
fn engine_field(world: &sim::World, id: sim::formation::FormationId) -> Option<([u32; 4], Vec<u8>)> {
    let field = world.formation_field(id)?;
    let r = field.region();
    let mut codes = Vec::new();
    for j in r.j0..r.j1 {
        for i in r.i0..r.i1 {
            let cell = pathing::Navcell::new(i as u16, j as u16);
            codes.push(match (field.distance(cell), field.next(cell)) {
                (None, _) => 0,
                (Some(_), None) => 5,
                (Some(_), Some(n)) => {
                    let (dx, dz) = (i32::from(n.i) - i as i32, i32::from(n.j) - j as i32);
                    assert!(dx.abs() <= 1 && dz.abs() <= 1 && (dx, dz) != (0, 0), "a step is to a neighbour");
                    (3 * (dz + 1) + dx + 2) as u8
                }
            });
        }
    }
    Some(([r.i0, r.j0, r.i1, r.j1], codes))
}

#[test]
fn the_hierarchy_and_flow_field_layers_hold_the_engines_own_at_every_frame() {
    let rulesets = replay::rules::Rulesets::none().with(skirmish::tools::ruleset());
    let options = ViewOptions { threads: 1, diff_limit: 100, rulesets: rulesets.clone(), ..ViewOptions::default() };
    let (mut hierarchy_changes, mut fields_seen, mut field_changes) = (0, 0, 0);
    for name in GOLDEN.iter().chain(&["skirmish-ai"]) {
        let file = golden(name);
        let bytes = std::fs::read(&file).unwrap();
        let html = build_html(&[Source { name: &file, bytes: &bytes }], &options).unwrap();
        let data = page_data(&html);
        let game = &data["games"][0];
        assert_eq!(data["chunk"], pathing::CHUNK_SIZE, "{name}: the page names the hierarchy's chunk size");
        let replay = replay::format::Replay::read(&bytes[..]).unwrap();
        let mut world = replay::verify::initial_world(&replay.header, 1, &rulesets).unwrap();
        let classes: Vec<pathing::PassClass> = world.nav().classes().iter().map(|(c, _)| c).collect();
        hierarchy_changes += game["hr"].as_array().unwrap().len().saturating_sub(classes.len());
        let forms = game["forms"].as_array().unwrap();
        for frame in 0..=replay.turns.len() as u64 {
            for &class in &classes {
                let page = regions_at(game, class.index(), frame);
                let engine = world.nav().class_nav(class).map(|nav| {
                    let h = nav.hierarchy();
                    (
                        h.chunk_region_counts().map(u64::from).collect::<Vec<u64>>(),
                        h.region_components().iter().map(|&k| u64::from(k)).collect::<Vec<u64>>(),
                    )
                });
                assert_eq!(page, engine, "{name}: class {} at frame {frame}", class.index());
            }
            for form in forms {
                let id = sim::formation::FormationId(form["id"].as_u64().unwrap() as u32);
                let engine = if world.formation(id).is_some() { engine_field(&world, id) } else { None };
                let page = field_at(form, frame);
                if world.formation(id).is_some() {
                    assert_eq!(page, engine, "{name}: formation {} at frame {frame}", id.0);
                }
                fields_seen += usize::from(page.is_some());
            }
            if let Some(record) = replay.turns.get(frame as usize) {
                world.step(&record.commands);
            }
        }
        field_changes += forms.iter().map(|f| f["ff"].as_array().unwrap().len()).sum::<usize>();
    }
    assert!(hierarchy_changes > 0, "some golden replay changes a class's hierarchy after frame 0, so the changes are tested");
    assert!(
        fields_seen > 0 && field_changes > 3,
        "the formations replay's fields are held ({fields_seen} frames, {field_changes} changes)"
    );
}

#[test]
fn the_timeline_and_player_series_hold_what_a_re_simulation_reports() {
    let file = golden("skirmish-ai");
    let bytes = std::fs::read(&file).unwrap();
    let rulesets = replay::rules::Rulesets::none().with(skirmish::tools::ruleset());
    let options = ViewOptions { threads: 1, diff_limit: 100, rulesets: rulesets.clone(), ..ViewOptions::default() };
    let html = build_html(&[Source { name: &file, bytes: &bytes }], &options).unwrap();
    let data = page_data(&html);
    let game = &data["games"][0];
    let strs = data["strs"].as_array().unwrap();
    let text = |v: &Value| strs[v.as_u64().unwrap() as usize].as_str().unwrap().to_owned();
    let units = game["units"].as_array().unwrap();
    // The page's events, decoded from its columns: (frame, kind, unit id).
    let mut page: Vec<(u64, String, Option<String>)> = Vec::new();
    for c in game["ev"].as_array().unwrap() {
        let (mut frame, mut unit) = (0i64, 0i64);
        let f = c["f"].as_array().unwrap();
        for (k, df) in f.iter().enumerate() {
            frame += df.as_i64().unwrap();
            unit += c["u"][k].as_i64().unwrap();
            let id = (unit > 0).then(|| units[unit as usize - 1]["id"].as_str().unwrap().to_owned());
            page.push((frame as u64, text(&c["k"]), id));
        }
    }
    // The re-simulation's, in the same form.
    let replay = replay::format::Replay::read(&bytes[..]).unwrap();
    let mut world = replay::verify::initial_world(&replay.header, 1, &rulesets).unwrap();
    let ruleset = rulesets.get("skirmish").unwrap();
    let mut expected: Vec<(u64, String, Option<String>)> = Vec::new();
    let mut fields_checked = 0;
    let series: Vec<&Value> = game["ps"].as_array().unwrap().iter().collect();
    for (turn, record) in replay.turns.iter().enumerate() {
        // Each player's numeric fields at this frame, against the series.
        for p in 1..=world.settings().players {
            for (module, value) in ruleset.player_json(&world, PlayerId(p)) {
                for (field, v) in value.as_object().into_iter().flatten() {
                    let Some(n) = v.as_i64() else { continue };
                    let name = format!("{module}.{field}");
                    let s = series
                        .iter()
                        .find(|s| s[0] == p && text(&s[1]) == name)
                        .unwrap_or_else(|| panic!("no series {name} of player {p}"));
                    let changes = s.as_array().unwrap()[2..].chunks(2).rfind(|c| c[0].as_u64().unwrap() <= turn as u64).unwrap();
                    assert_eq!(changes[1].as_i64(), Some(n), "player {p} {name} at frame {turn}");
                    fields_checked += 1;
                }
            }
        }
        let report = world.step(&record.commands);
        for e in &report.events {
            let json = match e {
                sim::Event::Game { rules, payload } => {
                    let json = ruleset.event_json(rules, payload).unwrap();
                    let (variant, body) = json.as_object().unwrap().iter().next().unwrap();
                    let unit = body.get("unit").map(|u| format!("{}v{}", u["index"], u["generation"]));
                    expected.push((turn as u64 + 1, format!("{rules}.{variant}"), unit));
                    continue;
                }
                other => serde_json::to_value(other).unwrap(),
            };
            let (variant, body) = json.as_object().unwrap().iter().next().unwrap();
            if ["Blocked", "Nudged", "Detour"].contains(&variant.as_str()) {
                continue;
            }
            let unit = body.get("unit").map(|u| format!("{}v{}", u["index"], u["generation"]));
            expected.push((turn as u64 + 1, variant.clone(), unit));
        }
    }
    assert!(fields_checked > 1000, "{fields_checked} player fields checked");
    assert!(expected.iter().any(|e| e.1 == "combat.Killed") && expected.iter().any(|e| e.1 == "Arrived"), "the game kills and arrives");
    // The page groups events by kind; within a kind they keep the order they happened in.
    let order = |list: &mut Vec<(u64, String, Option<String>)>| list.sort_by(|a, b| (&a.1, a.0).cmp(&(&b.1, b.0)));
    order(&mut page);
    order(&mut expected);
    assert_eq!(page.len(), expected.len());
    assert!(page == expected, "the page's timeline is the re-simulation's events");
}

/// Records the skirmish for `turns` turns; `alter` may change each turn's world or commands before
/// it is stepped (a planted desync, an extra command).
fn record_skirmish(turns: u32, keyframe_every: u32, alter: &mut dyn FnMut(&mut World, &mut Vec<Command>)) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/skirmish.json");
    let scenario = Scenario::load(&path).unwrap();
    let mut world = build_world(&scenario, 1).unwrap();
    let header = header_for(&scenario, &mut world, keyframe_every);
    let mut writer = ReplayWriter::new(Vec::new(), header).unwrap();
    let mut script = scenario.script();
    for _ in 0..turns {
        if writer.keyframe_due(&world) {
            writer.keyframe(&world).unwrap();
        }
        let mut commands = script.commands(world.turn());
        alter(&mut world, &mut commands);
        let report = world.step(&commands);
        script.observe(&report);
        writer.turn(&commands, &report).unwrap();
    }
    if writer.keyframe_due(&world) {
        writer.keyframe(&world).unwrap();
    }
    writer.finish().unwrap()
}

/// Two replays of the skirmish: as scripted, and with player 1's units stopped on turn 15.
fn diverging_pair(dir: &Path) -> (String, String) {
    let a = record_skirmish(40, 10, &mut |_, _| {});
    let b = record_skirmish(40, 10, &mut |world, commands| {
        if world.turn() == 15 {
            let units = world.units().filter(|u| u.owner == PlayerId(1) && !u.waypoints().is_empty()).map(|u| u.id).collect();
            commands.push(Command { turn: 15, player: PlayerId(1), seq: 9999, kind: CommandKind::Stop { units } });
        }
    });
    let (pa, pb) = (dir.join("a.replay"), dir.join("b.replay"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    (path_text(&pa), path_text(&pb))
}

#[test]
fn view_of_two_diverging_replays_shows_what_phalanx_diff_finds() {
    let dir = out_dir("diverging");
    let (a, b) = diverging_pair(&dir);
    let html_path = path_text(&dir.join("a-vs-b.html"));
    let (code, out, err) = phalanx(&["view", &a, &b, "--out", &html_path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("first diverging turn: 15"), "{out}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    let data = check_page(&html, &a);
    let div = &data["div"];
    assert_eq!(div["turn"], 15);
    assert_eq!(div["same_commands"], false);
    // The same turn, components and field differences as `phalanx diff`.
    let (code, diff_out, _) = phalanx(&["diff", &a, &b]);
    assert_eq!(code, 1);
    assert!(diff_out.contains("first diverging turn: 15"), "{diff_out}");
    let components_line = diff_out.lines().find(|l| l.starts_with("diverging components: ")).unwrap();
    let components: Vec<&str> = div["components"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(components_line, format!("diverging components: {}", components.join(", ")));
    assert!(
        diff_out.contains(&format!("state at the start of turn {} (keyframe): {} differing fields", div["state_turn"], div["total"])),
        "{diff_out}"
    );
    for f in div["diffs"].as_array().unwrap() {
        let entity = f["entity"].as_str().map(|e| format!(" {e}")).unwrap_or_default();
        let line = format!(
            "  {}{entity} {}: {} | {}",
            f["component"].as_str().unwrap(),
            f["field"].as_str().unwrap(),
            f["left"].as_str().unwrap(),
            f["right"].as_str().unwrap()
        );
        assert!(diff_out.lines().any(|l| l == line), "{line:?} is in the diff output:\n{diff_out}");
    }
    // Both games are drawn: the same until turn 15, apart after it.
    let games = data["games"].as_array().unwrap();
    assert_eq!(games.len(), 2);
    let positions = |g: &Value, frame: u64| -> Vec<(String, i64, i64)> {
        let mut out = Vec::new();
        for t in g["units"].as_array().unwrap() {
            let first = t["f"].as_u64().unwrap();
            let xs = t["x"].as_array().unwrap();
            if frame < first || frame >= first + xs.len() as u64 {
                continue;
            }
            let k = (frame - first) as usize + 1;
            let x = xs[..k].iter().map(|v| v.as_i64().unwrap()).sum();
            let z = t["z"].as_array().unwrap()[..k].iter().map(|v| v.as_i64().unwrap()).sum();
            out.push((t["id"].as_str().unwrap().to_owned(), x, z));
        }
        out
    };
    assert_eq!(positions(&games[0], 15), positions(&games[1], 15));
    assert_ne!(positions(&games[0], 20), positions(&games[1], 20));
    // Replays of one game (recorded twice) show no divergence.
    let (code, out, err) = phalanx(&["view", &a, &a, "--out", &html_path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no divergence found"), "{out}");
}

#[test]
fn a_replay_that_does_not_re_simulate_marks_its_frames_and_a_keyframe_brings_it_back() {
    // A one-bit desync planted in the recording on turn 19: re-simulated here, turn 19 misses its
    // hash, so the frames after it are this engine's and marked; a keyframe at turn 30 (recorded
    // every 15 turns) puts the frames back on the recording.
    let victim = std::cell::Cell::new(None);
    let bytes = record_skirmish(40, 15, &mut |world, _| {
        if world.turn() == 19 {
            let unit = world.units().find(|u| !u.waypoints().is_empty()).unwrap().id;
            assert!(world.plant_desync(unit));
            victim.set(Some(unit));
        }
    });
    let view = replay::viewer::build_view(
        &[Source { name: "planted", bytes: &bytes }],
        &ViewOptions { threads: 1, diff_limit: 10, ..ViewOptions::default() },
    )
    .unwrap();
    let data = page_data(&view.html);
    assert_eq!(data["games"][0]["bad"], serde_json::json!([[20, 29]]));
    assert!(view.notes.iter().any(|n| n.contains("turn 19 re-simulates to")), "{:?}", view.notes);
    assert!(view.notes.iter().any(|n| n.contains("from turn 30 follow the recording again")), "{:?}", view.notes);
    assert!(victim.get().is_some());
}

/// Runs headless Chromium on a page with a deadline; returns its standard output.
fn chromium(args: &[String]) -> String {
    let profile = tempdir("chromium-profile");
    let mut child = std::process::Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    // Read stdout on a thread so a full pipe cannot stall the browser; give up after 60 s.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).ok();
        text
    });
    let mut waited = 0;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(waited < 600, "chromium did not finish within 60 s");
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    let _ = std::fs::remove_dir_all(&profile);
    reader.join().unwrap()
}

fn tempdir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("phalanx-viewer-{what}-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn file_url(path: &Path) -> String {
    format!("file://{}", std::fs::canonicalize(path).unwrap().display())
}

#[test]
fn the_viewer_page_runs_in_headless_chromium() {
    if !Path::new("/usr/bin/chromium").exists() {
        match ci::when_missing("/usr/bin/chromium", "the viewer's browser test", std::env::var_os("CI").as_deref()) {
            ci::WhenMissing::Skip(message) => {
                eprintln!("{message}");
                return;
            }
            ci::WhenMissing::Fail(message) => panic!("{message}"),
        }
    }
    let dir = out_dir("chromium");
    let (a, b) = diverging_pair(&dir);
    let pages = [("formations", vec![golden("formations")]), ("diverging", vec![a, b]), ("skirmish-ai", vec![golden("skirmish-ai")])];
    let mut pages_with_paths = 0;
    let mut obstructed_pages = 0;
    for (name, files) in pages {
        let html_path = dir.join(format!("{name}.html"));
        let mut args = vec!["view".to_owned()];
        args.extend(files.iter().cloned());
        args.extend(["--out".to_owned(), path_text(&html_path)]);
        // The formations page carries a path query at turn 20, between two of its units.
        if name == "formations" {
            let at = world_at(&files[0], SeekTarget::Turn(20));
            let (a, b) = (at.units().next().unwrap().pos, at.units().last().unwrap().pos);
            args.extend(["--query".to_owned(), format!("20:{},{}:{},{}:0", a.x, a.z, b.x, b.z)]);
        }
        let (code, _, err) = phalanx(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{err}");
        // The page's self-test (#selftest): scrubs with the slider from the first turn to the last,
        // compares the canvas before and after, hovers a unit, and writes what it saw and any
        // error or console.error into the page, which --dump-dom prints.
        let dom = chromium(&["--dump-dom".to_owned(), format!("{}#selftest", file_url(&html_path))]);
        let marker = "PHXSELFTEST";
        let start = dom.find(marker).unwrap_or_else(|| panic!("{name}: no self-test result in the page:\n{}", &dom[..dom.len().min(2000)]));
        let rest = &dom[start + marker.len()..];
        let result: Value = serde_json::from_str(&rest[..rest.find(marker).unwrap()]).unwrap();
        assert_eq!(result["errors"], serde_json::json!([]), "{name}: the page logs no error: {result}");
        assert_eq!(result["done"], true);
        // The page opens on the frame the data names (the first turn with units), and the
        // divergence buttons go to the first diverging turn and the first differing state.
        let html = std::fs::read_to_string(&html_path).unwrap();
        let data = page_data(&html);
        assert_eq!(result["opened"], data["start"], "{name}: the page opens on its start frame: {result}");
        let div = &data["div"];
        if name == "diverging" {
            assert_eq!(result["to_div"], div["turn"], "{name}: 'go to turn' shows the diverging turn: {result}");
            let after = div["state_after"].as_u64().map(|t| t + 1);
            assert_eq!(result["after_div"].as_u64(), after, "{name}: 'first differing state' shows the turn after it: {result}");
            // A click on a row naming a unit pins that unit and centres the view on it, zoomed in.
            let centred = &result["centred"];
            let entity = centred["entity"].as_str().unwrap_or_else(|| panic!("{name}: a divergence row names a unit: {result}"));
            assert_eq!(Some(entity), centred["pinned"].as_str().map(|id| format!("unit {id}")).as_deref(), "{name}: {result}");
            let (dx, dz) = (centred["dx"].as_f64().unwrap(), centred["dy"].as_f64().unwrap());
            assert!(dx.abs() <= 1.0 && dz.abs() <= 1.0 && centred["zoom"].as_f64().unwrap() >= 24.0, "{name}: centred on it: {result}");
        } else {
            assert_eq!((&result["to_div"], &result["after_div"]), (&Value::Null, &Value::Null), "{name}: no divergence buttons");
        }
        assert_eq!(result["changed"], true, "{name}: moving the slider changes the picture: {result}");
        let hover = &result["hover"];
        assert_eq!(hover["highlighted"], true, "{name}: hovering a unit picks it: {result}");
        let id = hover["expected"].as_str().unwrap();
        let tip = hover["tip"].as_str().unwrap();
        assert!(
            tip.contains(&format!("unit {id}")) && tip.contains("owner: player") && tip.contains("state: ") && tip.contains("position: "),
            "{tip}"
        );
        assert!(tip.contains("to the nearest 1/16 navcell"), "{name}: the tip says how positions are rounded: {tip}");
        assert_eq!(hover["inside"], true, "{name}: the tip lies inside the map's area: {result}");
        // Only pinned and hovered units' paths by default; the "every unit's path" layer adds the rest.
        let with_paths = result["paths_with_waypoints"].as_u64().unwrap();
        pages_with_paths += usize::from(with_paths > 0);
        assert_eq!(result["all_paths_drawn"], with_paths > 0, "{name}: {with_paths} units with a path at the middle frame: {result}");
        // A unit found by its id is pinned; followed, the view stays on it to its last frame; an
        // unknown id changes nothing and is marked.
        let followed = &result["followed"];
        assert_eq!(followed["found"], true, "{name}: {result}");
        assert!(followed["dx"].as_f64().unwrap().abs() <= 1.0 && followed["dy"].as_f64().unwrap().abs() <= 1.0, "{name}: {result}");
        assert_eq!(followed["unknown_refused"], true, "{name}: {result}");
        // Selecting a player's units, and a box round the whole map, select exactly those units.
        let sel = &result["selection"];
        assert_eq!(sel["player"], sel["player_expected"], "{name}: {result}");
        assert_eq!(sel["box"], sel["box_expected"], "{name}: {result}");
        assert!(sel["box"].as_u64().unwrap() > 0, "{name}: {result}");
        assert_eq!(sel["listed"].as_u64(), sel["box"].as_u64().map(|n| n.min(40)), "{name}: {result}");
        assert_eq!(sel["cleared"], 0, "{name}: {result}");
        assert_eq!(result["edge_tip_inside"], true, "{name}: the tip of the unit furthest right and down lies inside too: {result}");
        // In a game with rules the tip shows the unit's game fields, which the page puts together
        // from their changes: the same text as from the data here.
        if name == "skirmish-ai" {
            let frame = result["frame"].as_u64().unwrap() as u32;
            let track = data["games"][0]["units"].as_array().unwrap().iter().find(|t| t["id"] == id).unwrap();
            let fields = game_text(&data, &track["gm"], frame);
            assert!(fields.contains("hp: ") && tip.contains(&format!("game: {fields}")), "{name}: frame {frame}: {fields} in {tip}");
        }
        // The timeline: its events by kind are the page data's; "next event" from the first
        // frame goes to the first shown event after it; a row naming a unit pins it at its turn;
        // a kind unticked shows none of its events.
        let timeline = &result["timeline"];
        let mut by_kind = serde_json::Map::new();
        for c in data["games"][0]["ev"].as_array().unwrap() {
            let kind = data["strs"][c["k"].as_u64().unwrap() as usize].clone();
            by_kind.insert(kind.as_str().unwrap().to_owned(), c["f"].as_array().unwrap().len().into());
        }
        if !data["div"].is_null() && !data["div"]["turn"].is_null() {
            by_kind.insert("desync".to_owned(), 1.into());
        }
        assert_eq!(timeline["by_kind"], Value::Object(by_kind), "{name}: {result}");
        assert_eq!(timeline["next"], timeline["next_expected"], "{name}: {result}");
        if !timeline["row"].is_null() {
            let row = &timeline["row"];
            assert_eq!(row["pinned"], row["unit"], "{name}: {result}");
            assert_eq!(row["present"], true, "{name}: {result}");
            let (frame, at) = (row["frame"].as_i64().unwrap(), row["event_frame"].as_i64().unwrap());
            assert!(frame == at || frame == at - 1, "{name}: {result}");
        }
        if !timeline["hidden_kind"].is_null() {
            assert_eq!(timeline["hidden_kind"]["still_shown"], 0, "{name}: {result}");
        }
        // The graphs: units alive per player at the last frame are the units present there.
        assert_eq!(result["graph"]["alive"], result["graph"]["counted"], "{name}: {result}");
        // Hit points: where the game has them, the bars show what the tip's game fields say.
        let health = &result["health"];
        assert_eq!(health["agree"], health["units"], "{name}: {result}");
        if name == "skirmish-ai" {
            assert!(health["units"].as_u64().unwrap() > 0, "{name}: the skirmish's units have hit points: {result}");
            let series = result["graph"]["series"].as_array().unwrap();
            assert!(series.iter().any(|s| s == "combat.kills") && series.iter().any(|s| s == "gathering.wood"), "{name}: {result}");
        }
        // The passability layer paints exactly the navcells the page's masks block for the
        // class, and a navcell an obstruction blocks changes colour when it is ticked.
        let pass = &result["pass"];
        assert_eq!(pass["painted_terrain"], pass["terrain"], "{name}: {result}");
        assert_eq!(pass["painted_obstructed"], pass["obstructed"], "{name}: {result}");
        if pass["obstructed"].as_u64().unwrap() > 0 {
            obstructed_pages += 1;
            assert_ne!(pass["on"], pass["off"], "{name}: {result}");
        }
        // The hierarchy layer labels the land class's chunks as the engine's hierarchy does (no
        // chunk split differently, as many regions and components) and paints every navcell the
        // class may enter; the clearance layer counts, per clearance, the navcells whose most
        // clearance among the classes that may stand there is that one, as the engine's grid has
        // them.
        let regions = &result["regions"];
        let frame = regions["frame"].as_u64().unwrap();
        let world = world_after(&files[0], frame);
        let class = pathing::PassClass::new(regions["cls"].as_u64().unwrap() as u8).unwrap();
        let h = world.nav().class_nav(class).unwrap().hierarchy();
        let masks = grid_masks(world.nav().grid());
        let passable = masks.iter().filter(|&&m| m & class.bit() == 0).count();
        assert_eq!(
            (&regions["regions"], &regions["components"], &regions["mismatched"], &regions["painted"]),
            (&h.n_regions().into(), &h.n_components().into(), &0.into(), &passable.into()),
            "{name}: {result}"
        );
        assert!(regions["info"].as_str().unwrap().contains("every chunk split as the engine's hierarchy has it"), "{name}: {result}");
        let clearance = &result["clearance"];
        let levels: Vec<f64> = clearance["levels"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let mut counts = vec![0u64; levels.len()];
        let mut none = 0u64;
        // The unit classes only: those the units' obstructions block.
        let class_clearances: Vec<Option<f64>> = world
            .nav()
            .classes()
            .iter()
            .map(|(_, d)| (d.obstructions == pathing::classes::ObstructionMode::Pathfinding).then(|| d.clearance.to_num::<f64>()))
            .collect();
        for m in &masks {
            let best = class_clearances
                .iter()
                .enumerate()
                .filter(|&(k, _)| m & (1 << k) == 0)
                .filter_map(|(_, &c)| c)
                .fold(None, |a: Option<f64>, c| Some(a.map_or(c, |a| a.max(c))));
            match best {
                Some(c) => counts[levels.iter().position(|&l| l == c).unwrap()] += 1,
                None => none += 1,
            }
        }
        assert_eq!((clearance["counts"].clone(), clearance["none"].as_u64()), (serde_json::json!(counts), Some(none)), "{name}: {result}");
        // The flow-field layer: the first field of a formation holds the engine's reachable and
        // goal navcells at its frame.
        if name == "formations" {
            let flow = &result["flow"];
            let world = world_after(&files[0], flow["frame"].as_u64().unwrap());
            let (rect, codes) = engine_field(&world, sim::formation::FormationId(flow["form"].as_u64().unwrap() as u32)).unwrap();
            assert_eq!(flow["rect"], serde_json::json!(rect), "{name}: {result}");
            assert_eq!(flow["reachable"].as_u64(), Some(codes.iter().filter(|&&c| c != 0).count() as u64), "{name}: {result}");
            assert_eq!(flow["goals"].as_u64(), Some(codes.iter().filter(|&&c| c == 5).count() as u64), "{name}: {result}");
            assert!(flow["goals"].as_u64().unwrap() > 0, "{name}: {result}");
        }
        // Each path query paints exactly its closed navcells at its turn, and its smoothed path
        // is drawn in the query colour.
        let queries = result["queries"].as_array().unwrap();
        assert_eq!(queries.len(), data["games"][0]["qs"].as_array().unwrap().len(), "{name}: {result}");
        if name == "formations" {
            let q = &queries[0];
            assert_eq!(q["frame"], 20, "{name}: the query's link goes to its turn: {result}");
            assert!(q["expanded"].as_u64().unwrap() > 0 && q["painted"] == q["expanded"], "{name}: {result}");
            let px = q["pixel"].as_array().unwrap_or_else(|| panic!("{name}: the query has a path: {result}"));
            let c: Vec<u64> = px.iter().map(|v| v.as_u64().unwrap()).collect();
            assert!(c[0] > 180 && c[1] < 120 && c[2] > 150, "{name}: the path is drawn in the query colour, not {c:?}");
        }
        // A screenshot of the page at turn 20, kept under target/ for a person to look at.
        let shot = dir.join(format!("{name}-turn20.png"));
        let _ = std::fs::remove_file(&shot);
        chromium(&[
            "--window-size=1280,800".to_owned(),
            format!("--screenshot={}", shot.display()),
            format!("{}#turn=20", file_url(&html_path)),
        ]);
        let (w, h, rgb) = decode_png(&std::fs::read(&shot).unwrap_or_else(|e| panic!("{name}: no screenshot at {}: {e}", shot.display())));
        assert_eq!((w, h), (1280, 800));
        let distinct: std::collections::BTreeSet<&[u8]> = rgb.chunks_exact(3).collect();
        assert!(distinct.len() > 20, "{name}: the screenshot shows a picture, not a blank page");
        eprintln!("{name}: screenshot {}", shot.display());
    }
    assert!(pages_with_paths > 0, "some page has units walking at its middle frame, so the paths layer is tested");
    assert!(obstructed_pages > 0, "some page has navcells an obstruction blocks, so the passability layer is tested");
}

/// A pair of skirmish games where B's turn 15 has an extra command that is refused (it changes no
/// state), and, when `desync_at` is given, a one-bit desync planted before that turn.
fn command_only_pair(dir: &Path, desync_at: Option<u32>) -> (String, String) {
    let a = record_skirmish(40, 10, &mut |_, _| {});
    let b = record_skirmish(40, 10, &mut |world, commands| {
        if world.turn() == 15 {
            let ghost = sim::EntityId { index: 99_999, generation: 0 };
            commands.push(Command { turn: 15, player: PlayerId(1), seq: 9999, kind: CommandKind::Remove { units: vec![ghost] } });
        }
        if Some(world.turn()) == desync_at {
            // Every unit, so that the flipped bit survives the step for some (a moving unit's
            // position may be recomputed from its path).
            let units: Vec<_> = world.units().map(|u| u.id).collect();
            for unit in units {
                assert!(world.plant_desync(unit));
            }
        }
    });
    let (pa, pb) = (dir.join("a.replay"), dir.join("b.replay"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    (path_text(&pa), path_text(&pb))
}

#[test]
fn diff_and_viewer_agree_on_a_divergence_of_commands_alone() {
    // On a divergence of commands alone, `phalanx diff` printed "0 differing fields" and nothing
    // after, while the viewer offered a "first differing state (turn 16)" that did not differ.
    let dir = out_dir("commands-only");
    let (a, b) = command_only_pair(&dir, None);
    let (code, diff_out, _) = phalanx(&["diff", &a, &b]);
    assert_eq!(code, 1, "{diff_out}");
    assert!(diff_out.contains("first diverging turn: 15") && diff_out.contains("the commands of turn 15 differ"), "{diff_out}");
    assert!(diff_out.contains("  B player 1 seq 9999: remove 99999v0"), "{diff_out}");
    assert!(diff_out.contains("the states are the same for all 40 common turns"), "{diff_out}");
    assert!(!diff_out.contains("differing fields"), "{diff_out}");
    let html_path = path_text(&dir.join("a-vs-b.html"));
    let (code, _, err) = phalanx(&["view", &a, &b, "--out", &html_path]);
    assert_eq!(code, 0, "{err}");
    let data = page_data(&std::fs::read_to_string(&html_path).unwrap());
    let div = &data["div"];
    assert_eq!((div["turn"].as_u64(), div["same_commands"].as_bool()), (Some(15), Some(false)));
    assert_eq!(div["state_after"], Value::Null, "no differing state to offer: {div}");
    assert!(div["summary"].as_str().unwrap().contains("the states are the same for all 40 common turns"), "{div}");
}

#[test]
fn diff_and_viewer_name_the_first_differing_state_after_a_command_divergence() {
    // The same divergence of commands at turn 15, then the states part at turn 20: both tools name
    // turn 20 (its end state, the start of turn 21) and diff the fields at the next keyframe.
    let dir = out_dir("commands-then-state");
    let (a, b) = command_only_pair(&dir, Some(20));
    let (code, diff_out, _) = phalanx(&["diff", &a, &b]);
    assert_eq!(code, 1, "{diff_out}");
    assert!(diff_out.contains("first diverging turn: 15"), "{diff_out}");
    assert!(diff_out.contains("the states after turn 15 are the same"), "{diff_out}");
    assert!(diff_out.contains("first differing state: after turn 20 (the start of turn 21)"), "{diff_out}");
    assert!(diff_out.contains("diverging components: units"), "{diff_out}");
    assert!(diff_out.contains("state at the start of turn 30 (keyframe): "), "{diff_out}");
    let html_path = path_text(&dir.join("a-vs-b.html"));
    let (code, _, err) = phalanx(&["view", &a, &b, "--out", &html_path]);
    assert_eq!(code, 0, "{err}");
    let data = page_data(&std::fs::read_to_string(&html_path).unwrap());
    let div = &data["div"];
    assert_eq!((div["turn"].as_u64(), div["state_after"].as_u64(), div["state_turn"].as_u64()), (Some(15), Some(20), Some(30)));
    assert_eq!(div["components"], serde_json::json!(["units"]));
    let fields_line = format!("state at the start of turn 30 (keyframe): {} differing fields", div["total"]);
    assert!(diff_out.contains(&fields_line), "{diff_out}");
}

#[test]
fn the_viewer_opens_on_the_first_turn_with_units() {
    // The page opened on turn 0, whose map is empty when the units are spawned by turn 0's commands.
    let bytes = record_skirmish(5, 0, &mut |_, _| {});
    let view = replay::viewer::build_view(
        &[Source { name: "skirmish", bytes: &bytes }],
        &ViewOptions { threads: 1, diff_limit: 10, ..ViewOptions::default() },
    )
    .unwrap();
    let data = page_data(&view.html);
    let first_with_units = data["games"][0]["units"].as_array().unwrap().iter().map(|t| t["f"].as_u64().unwrap()).min().unwrap();
    assert!(first_with_units > 0, "the skirmish spawns its units in turn 0");
    assert_eq!(data["start"].as_u64(), Some(first_with_units));
}

#[test]
fn the_viewer_shows_each_units_game_fields_as_they_change() {
    // A battle of the reference rules: the hover details carry each unit's game state.
    let scenario = replay::scenario::Scenario::load_with(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/battle.json"),
        &phalanx_cli::stock_rulesets(),
    )
    .unwrap();
    let options = replay::record::RunOptions { turns: 120, threads: 1, keyframe_every: 40 };
    let (_, bytes) = replay::record::run(&scenario, &options, Some(Vec::new()), &mut |_, _| {}).unwrap();
    let bytes = bytes.unwrap();
    let view = replay::viewer::build_view(
        &[Source { name: "battle", bytes: &bytes }],
        &ViewOptions { threads: 1, diff_limit: 10, rulesets: phalanx_cli::stock_rulesets(), ..ViewOptions::default() },
    )
    .unwrap();
    let data = page_data(&view.html);
    let units = data["games"][0]["units"].as_array().unwrap();
    assert!(units.iter().all(|t| !t["gm"].as_array().unwrap().is_empty()), "every unit has game fields");
    // Hit points change during the fight, so some unit has changes after its first entry.
    assert!(units.iter().any(|t| t["gm"].as_array().unwrap().len() > 1));
    // At the end every unit's fields, put together from its changes as the page does, are the
    // text the tools print for the world's unit.
    let rulesets = phalanx_cli::stock_rulesets();
    let end = restore(&bytes[..], "battle", SeekTarget::End, 1, &rulesets).unwrap().world;
    let rules = rulesets.of_world(&end).unwrap();
    let mut checked = 0;
    for u in end.units() {
        let id = format!("{}v{}", u.id.index, u.id.generation);
        let t = units.iter().find(|t| t["id"] == id.as_str()).unwrap();
        let modules = rules.unit_json(&end, u.id);
        let expected = replay::diff::value_text(&Value::Object(modules.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()));
        assert_eq!(game_text(&data, &t["gm"], end.turn()), expected, "unit {id}");
        checked += 1;
    }
    assert!(checked > 10, "{checked} units at the end");
    let any = units.iter().map(|t| game_text(&data, &t["gm"], 1)).find(|t| t.contains("kind: Spearman") && t.contains("hp: "));
    assert!(any.is_some(), "a spearman's fields at frame 1");
    // Without the ruleset the page cannot be built at all: the replay names rules it does not know.
    let err = replay::viewer::build_view(
        &[Source { name: "battle", bytes: &bytes }],
        &ViewOptions { threads: 1, diff_limit: 10, ..ViewOptions::default() },
    );
    assert!(err.is_err_and(|e| e.to_string().contains("unknown ruleset \"skirmish\"")));
}

/// Position units of the page (1/16 navcell, rounded half up), as `replay/src/viewer.rs` writes them.
fn page_units(v: pathing::Fixed, cell: pathing::Fixed) -> i64 {
    let cell_bits = i128::from(cell.to_bits());
    (i128::from(v.to_bits()) * 32 + cell_bits).div_euclid(2 * cell_bits) as i64
}

/// A path query answers the search the simulation then makes: a unit ordered where the query
/// asked walks exactly the query's smoothed path; and the page holds, for a unit of a golden
/// replay at a turn, the search `World::query_unit_path` makes on the re-simulated world of that
/// turn (the closed navcells and the path, exactly), and refuses queries it cannot answer.
#[test]
fn a_path_query_is_the_search_the_simulation_makes_and_the_page_holds_it() {
    let rows = [
        "########################",
        "#......................#",
        "#......................#",
        "#......................#",
        "#......................#",
        "#.........#............#",
        "#.........#............#",
        "#.........#............#",
        "#.........#............#",
        "#.........#............#",
        "#.........#............#",
        "#......................#",
        "#......................#",
        "#......................#",
        "#......................#",
        "########################",
    ];
    let mut world = sim::test_support::world_from(&rows, 1);
    let m = |n: i32| pathing::Fixed::from_num(n);
    let class = pathing::PassClass::of(0);
    let spawn =
        CommandKind::Spawn { class, at: pathing::WorldPos::from_int(4, 8), count: 1, radius: m(1) / 2, speed: m(4), turn_rate: None };
    world.step(&[Command { turn: world.turn(), player: PlayerId(1), seq: 0, kind: spawn }]);
    let unit = world.units().next().unwrap().clone();
    let target = pathing::WorldPos::from_int(18, 8);
    assert_eq!(world.query_unit_path(unit.id), Err(sim::QueryRefusal::NoSearch), "a unit with no order makes no search");
    let query = world.query_path(class, unit.pos, target).unwrap();
    assert_eq!(query.status, pathing::PathStatus::Complete);
    assert!(!query.expanded.is_empty() && query.cells.len() >= 3, "round the wall: {query:?}");
    assert_eq!(query.waypoints.last(), Some(&sim::off_grid_lines(target, world.nav().grid().cell_size())));
    let order = CommandKind::Move { units: vec![unit.id], goal: sim::GoalSpec::Point(target), queue: false };
    world.step(&[Command { turn: world.turn(), player: PlayerId(1), seq: 1, kind: order }]);
    let walking = world.unit(unit.id).unwrap().waypoints().to_vec();
    assert!(!walking.is_empty() && query.waypoints.ends_with(&walking), "walks the query's path: {walking:?} of {:?}", query.waypoints);
    // Asked again from where it stands now, its order's search ends where its path does.
    let asked = world.query_unit_path(unit.id).unwrap();
    assert_eq!(
        (asked.status, asked.from, asked.waypoints.last()),
        (pathing::PathStatus::Complete, world.unit(unit.id).unwrap().pos, walking.last())
    );

    // The page of a golden replay with a unit's query and a query between two points.
    let file = golden("maze");
    let bytes = std::fs::read(&file).unwrap();
    let at = world_at(&file, SeekTarget::Turn(5));
    let subject = at.units().find(|u| !u.orders.is_empty()).expect("a unit on an order at turn 5").id;
    let (from, to) = (pathing::WorldPos::from_int(10, 12), pathing::WorldPos::from_int(30, 30));
    let queries = vec![
        replay::viewer::QuerySpec::parse(&format!("5:{subject}")).unwrap(),
        replay::viewer::QuerySpec::parse("5:10,12:30,30:0").unwrap(),
    ];
    let options = ViewOptions { threads: 1, diff_limit: 10, queries, ..ViewOptions::default() };
    let view = replay::viewer::build_view(&[Source { name: &file, bytes: &bytes }], &options).unwrap();
    let data = page_data(&view.html);
    let cell = at.nav().grid().cell_size();
    let width = at.nav().grid().width();
    let expected = [at.query_unit_path(subject).unwrap(), at.query_path(class, from, to).unwrap()];
    let shown = data["games"][0]["qs"].as_array().unwrap();
    assert_eq!(shown.len(), 2);
    for (q, answer) in shown.iter().zip(&expected) {
        assert_eq!(q["f"], 5);
        let mut cells: Vec<u64> = answer.expanded.iter().map(|c| u64::from(c.j) * u64::from(width) + u64::from(c.i)).collect();
        cells.sort_unstable();
        let mut k = 0;
        let decoded: Vec<u64> = q["x"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                k += d.as_u64().unwrap();
                k
            })
            .collect();
        assert_eq!(decoded, cells, "{q}");
        let mut walk = vec![answer.from];
        walk.extend(&answer.waypoints);
        let points: Vec<i64> = walk.iter().flat_map(|p| [page_units(p.x, cell), page_units(p.z, cell)]).collect();
        assert_eq!(q["p"], serde_json::json!(points), "{q}");
        assert_eq!(q["g"].as_array().unwrap().len(), 2 * answer.cells.len());
    }
    assert_eq!(shown[0]["id"], subject.to_string());
    assert_eq!(shown[0]["st"], "complete");

    // Queries it cannot answer are refused with the query named.
    let refused = |text: &str| {
        let options = ViewOptions { queries: vec![replay::viewer::QuerySpec::parse(text).unwrap()], ..ViewOptions::default() };
        replay::viewer::build_view(&[Source { name: &file, bytes: &bytes }], &options).unwrap_err().to_string()
    };
    assert!(refused("5:999").contains("--query 5:999: no live unit 999 at turn 5"), "{}", refused("5:999"));
    assert!(refused("100000:0").contains("the replay ends at turn"));
    assert!(refused("5:1,1:3000,3000:0").contains("off the map"), "{}", refused("5:1,1:3000,3000:0"));
    assert!(refused("5:1,1:3,3:15").contains("class"), "{}", refused("5:1,1:3,3:15"));
    // A snapshot answers queries of its own turn only.
    let snapshot = at.save();
    let of_snapshot = |text: &str| {
        let options = ViewOptions { queries: vec![replay::viewer::QuerySpec::parse(text).unwrap()], ..ViewOptions::default() };
        replay::viewer::build_view(&[Source { name: "maze-5.snapshot", bytes: &snapshot }], &options)
    };
    let page = page_data(&of_snapshot("5:10,12:30,30:0").unwrap().html);
    assert_eq!(page["games"][0]["qs"][0]["p"], shown[1]["p"], "the snapshot's answer is the replay's");
    assert!(of_snapshot("6:10,12:30,30:0").unwrap_err().to_string().contains("a snapshot holds turn 5 only"));
    let many = ViewOptions { queries: vec![replay::viewer::QuerySpec::parse("5:0").unwrap(); 17], ..ViewOptions::default() };
    assert!(replay::viewer::build_view(&[Source { name: &file, bytes: &bytes }], &many).unwrap_err().to_string().contains("at most 16"));
    for bad in ["", "5", "x:0", "5:1v", "5:1,2", "5:1,2:3", "5:a,2:3,4", "5:1,2:3,4:99", "5:1:2:3:4"] {
        assert!(replay::viewer::QuerySpec::parse(bad).is_err(), "{bad:?} is refused");
    }
}
