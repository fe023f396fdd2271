//! The picture commands of the command line: `render` (a PNG of one turn) and `view` (the
//! self-contained HTML replay viewer).

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::CliError;
use replay::format::MAGIC;
use replay::picture::{self, Layers};
use replay::seek::{SeekTarget, restore};
use replay::viewer::{Source, ViewOptions, build_view};

/// Largest file `phalanx view` reads into memory (as `phalanx diff`). `[Units: bytes]`
const MAX_VIEW_FILE: u64 = 1 << 30;

fn bad(message: String) -> CliError {
    CliError::BadArgument { message }
}

fn io_error(file: &Path, source: std::io::Error) -> CliError {
    CliError::Io { file: file.display().to_string(), source }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|source| CliError::Write { file: path.display().to_string(), source })
}

/// `phalanx render FILE [--turn T] --out PNG`.
#[allow(clippy::too_many_arguments)]
pub(super) fn cmd_render(
    file: &Path,
    turn: Option<u32>,
    out_path: &Path,
    scale: Option<u32>,
    layers: &str,
    threads: usize,
    rulesets: &replay::rules::Rulesets,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, CliError> {
    let layers = Layers::parse(layers).map_err(|e| bad(format!("--layers: {e}")))?;
    let name = file.display().to_string();
    let mut input = std::fs::File::open(file).map_err(|e| io_error(file, e))?;
    let mut magic = [0u8; 8];
    let sniffed = input.read(&mut magic).map_err(|e| io_error(file, e))?;
    input.rewind().map_err(|e| io_error(file, e))?;
    let mut code = 0;
    let world = if sniffed == magic.len() && magic == MAGIC {
        let target = turn.map_or(SeekTarget::End, SeekTarget::Turn);
        let restored = restore(std::io::BufReader::new(input), &name, target, threads, rulesets).map_err(bad)?;
        if let Some(d) = &restored.divergence {
            code = 1;
            let _ = writeln!(
                err,
                "phalanx: DIVERGED: {name}: turn {} re-simulates to {} but the replay recorded {} (diverging: {}); the picture is this engine's state, not the recording's",
                d.turn,
                d.found,
                d.recorded,
                d.components.join(", ")
            );
        }
        restored.world
    } else {
        let mut bytes = Vec::new();
        input.take(sim::snapshot::MAX_PAYLOAD as u64 + 64).read_to_end(&mut bytes).map_err(|e| io_error(file, e))?;
        let world = rulesets.load(&bytes).map_err(|e| bad(format!("{name}: neither a replay nor a snapshot: {e}")))?;
        if let Some(t) = turn
            && t != world.turn()
        {
            return Err(bad(format!("{name}: a snapshot of turn {}, but --turn asks for turn {t}", world.turn())));
        }
        world
    };
    let options = picture::Options { scale, layers };
    let png = picture::render_png(&world, &options);
    write_file(out_path, &png)?;
    let grid = world.nav().grid();
    let scale = picture::effective_scale(grid.width(), grid.height(), scale);
    let _ = writeln!(
        out,
        "{}: turn {}, {} units, {}x{} navcells at {scale} px each ({}x{} px, {} bytes); state hash {}",
        out_path.display(),
        world.turn(),
        world.units().count(),
        grid.width(),
        grid.height(),
        grid.width() * scale,
        grid.height() * scale,
        png.len(),
        &sim::state_hash::hex(&world.state_hash())[..16]
    );
    Ok(code)
}

fn read_limited(path: &Path) -> Result<Vec<u8>, CliError> {
    super::read_capped(path, MAX_VIEW_FILE)
}

/// `phalanx view FILE [FILE2] --out HTML`.
pub(super) fn cmd_view(
    files: &[PathBuf],
    out_path: &Path,
    threads: usize,
    queries: &[replay::viewer::QuerySpec],
    rulesets: &replay::rules::Rulesets,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, CliError> {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut contents = Vec::new();
    for f in files {
        contents.push(read_limited(f)?);
    }
    let sources: Vec<Source<'_>> = names.iter().zip(&contents).map(|(name, bytes)| Source { name, bytes }).collect();
    let started = std::time::Instant::now();
    let view = build_view(&sources, &ViewOptions { threads, diff_limit: 100, rulesets: rulesets.clone(), queries: queries.to_vec() })
        .map_err(|e| bad(e.to_string()))?;
    write_file(out_path, view.html.as_bytes())?;
    for n in &view.notes {
        let _ = writeln!(err, "phalanx: note: {n}");
    }
    let _ = writeln!(
        out,
        "{}: {} frames, {} unit tracks, {} bytes, built in {:.2} s",
        out_path.display(),
        view.frames,
        view.units,
        view.html.len(),
        started.elapsed().as_secs_f64()
    );
    if files.len() == 2 {
        match view.divergence {
            Some(t) => {
                let _ = writeln!(out, "first diverging turn: {t} (marked in the page)");
            }
            None => {
                let _ = writeln!(out, "no divergence found");
            }
        }
    }
    Ok(0)
}
