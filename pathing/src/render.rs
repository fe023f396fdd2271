//! ASCII renderings of a class's passability with a path, expanded nodes and a goal on top, used by
//! snapshot tests and the command line.
//!
//! The top line is the northmost row (`j = height - 1`). Characters, strongest first:
//! `S` path start, `E` path end, `o` turning point, `*` other navcell on the path, `x` expanded
//! node, `g` goal navcell, `#` impassable, `.` passable.

use crate::grid::navcell::Navcell;
use crate::grid::pass_map::PassMap;
use crate::search::driver::Path;
use crate::search::goal::Goal;

/// What to draw over the passability.
#[derive(Clone, Copy, Debug, Default)]
pub struct Layers<'a> {
    /// A path to draw.
    pub path: Option<&'a Path>,
    /// Navcells expanded by a search.
    pub expanded: &'a [Navcell],
    /// A goal whose navcells to mark.
    pub goal: Option<&'a Goal>,
}

/// Renders a map with its layers, one line per row, north first, each line ending in `\n`.
pub fn render_ascii(map: &PassMap, layers: &Layers<'_>) -> String {
    let (w, h) = (map.width() as usize, map.height() as usize);
    let mut canvas: Vec<u8> = Vec::with_capacity((w + 1) * h);
    for j in (0..h).rev() {
        for i in 0..w {
            let cell = Navcell::new(i as u16, j as u16);
            let mut ch = if map.is_passable(cell) { b'.' } else { b'#' };
            if let Some(goal) = layers.goal
                && goal.contains_navcell(i as u32, j as u32, map.cell_size(), map.width(), map.height())
            {
                ch = b'g';
            }
            canvas.push(ch);
        }
        canvas.push(b'\n');
    }
    let mut put = |cell: Navcell, ch: u8| {
        let (i, j) = (usize::from(cell.i), usize::from(cell.j));
        if i < w && j < h {
            canvas[(h - 1 - j) * (w + 1) + i] = ch;
        }
    };
    for &cell in layers.expanded {
        put(cell, b'x');
    }
    if let Some(path) = layers.path {
        for cell in path.cells() {
            put(cell, b'*');
        }
        let points = path.waypoints();
        for &cell in points {
            put(cell, b'o');
        }
        if let (Some(&first), Some(&last)) = (points.first(), points.last()) {
            put(last, b'E');
            put(first, b'S');
        }
    }
    String::from_utf8(canvas).expect("the canvas holds ASCII only")
}
