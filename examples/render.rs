//! Ray-casts a whole window through the picking API and writes it as a PNG shaded by
//! normal, with the object under a pick pixel highlighted.
//!
//! ```text
//! cargo run --release --example render -- [--pick PX,PY] [--out render.png] [camera options]
//! ```
//!
//! Every pixel `(px, py)` (from the top-left, y down) is one
//! `LineSegmentIntersector::from_window` query at the window position
//! `Viewport::window_from_top_left(px + 0.5, py + 0.5)`, limit `Nearest`, through an
//! `IntersectionVisitor` given the camera's view, projection and viewport: exactly what a
//! GPU rasteriser samples at pixel centres, so the image must look like the scene rendered
//! by one (`tests/render_matches_rasterisation.rs` checks it against a rasterisation).
//! Rows run in parallel with rayon, each task with its own visitor and intersector.
//!
//! Shading: the world normal, turned towards the eye, as a colour (`0.5 + 0.5 n` per
//! channel), dimmed by the angle to the view ray. The pick pixel's object (same node path
//! and drawable) is tinted yellow, and a cross marks the pick pixel.

#[path = "common/camera.rs"]
mod camera;
#[path = "common/ray_cast.rs"]
mod ray_cast;
#[path = "common/view_args.rs"]
mod view_args;
#[path = "common/window_pick.rs"]
mod window_pick;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use scene_intersect::prelude::*;
use view_args::{parse_pair, ViewArgs, VIEW_USAGE};

fn usage() -> String {
    format!(
        "usage: render [--pick PX,PY] [--out PATH] [options]\n  --pick PX,PY        the pixel \
         whose object is highlighted (default: the centre pixel)\n  --out PATH          \
         output PNG (default: render.png)\n{VIEW_USAGE}"
    )
}

/// The options of `render`.
struct Options {
    view: ViewArgs,
    pick: Option<(f64, f64)>,
    out: PathBuf,
}

fn main() -> ExitCode {
    let mut o = Options {
        view: ViewArgs::default(),
        pick: None,
        out: PathBuf::from("render.png"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            println!("{}", usage());
            return ExitCode::SUCCESS;
        }
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let taken = match flag.as_str() {
            "--pick" => value()
                .and_then(|v| parse_pair("--pick", &v))
                .map(|p| o.pick = Some(p))
                .map(|()| true),
            "--out" => value().map(|v| o.out = PathBuf::from(v)).map(|()| true),
            _ => o.view.take(&flag, &mut value),
        };
        match taken {
            Ok(true) => {}
            Ok(false) => {
                eprintln!("render: unknown option `{flag}`\n\n{}", usage());
                return ExitCode::from(2);
            }
            Err(message) => {
                eprintln!("render: {message}\n\n{}", usage());
                return ExitCode::from(2);
            }
        }
    }
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("render: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(o: &Options) -> Result<(), String> {
    let (scene, import) = load_gltf(&o.view.scene)
        .map_err(|e| format!("cannot load {}: {e}", o.view.scene.display()))?;
    let bound = scene
        .node_bound(import.root)
        .filter(|b| !b.is_empty())
        .ok_or("the scene is empty")?;
    let camera = o.view.camera(&bound)?;
    let (w, h) = (camera.width, camera.height);
    let (px, py) = match o.pick {
        Some((x, y)) if x >= 0.0 && y >= 0.0 && x < f64::from(w) && y < f64::from(h) => {
            (x as u32, y as u32)
        }
        Some((x, y)) => return Err(format!("--pick {x},{y} is outside the {w}x{h} image")),
        None => (w / 2, h / 2),
    };

    let started = Instant::now();
    let hits = ray_cast::ray_cast(&scene, import.root, &camera).map_err(|e| e.to_string())?;
    let elapsed = started.elapsed().as_secs_f64();
    let picked = hits[(py * w + px) as usize].clone();

    let mut rgb = vec![0u8; (w * h * 3) as usize];
    for (i, hit) in hits.iter().enumerate() {
        let y = i as u32 / w;
        let colour = match hit {
            None => {
                let t = f64::from(y) / f64::from(h);
                [30.0 + 30.0 * t, 34.0 + 30.0 * t, 44.0 + 30.0 * t]
            }
            Some(hit) => {
                let to_eye = (camera.eye - hit.world_point).normalize_or_zero();
                let mut n = hit.world_normal;
                if n.dot(to_eye) < 0.0 {
                    n = -n;
                }
                let light = 0.45 + 0.55 * n.dot(to_eye).clamp(0.0, 1.0);
                let mut c = (n * 0.5 + 0.5).to_array().map(|v| 255.0 * v * light);
                let same_object = picked
                    .as_ref()
                    .is_some_and(|p| p.drawable == hit.drawable && p.node_path == hit.node_path);
                if same_object {
                    c = [c[0] * 0.4 + 153.0, c[1] * 0.4 + 140.0, c[2] * 0.4];
                }
                c
            }
        };
        let at = i * 3;
        rgb[at..at + 3].copy_from_slice(&colour.map(|v| v.clamp(0.0, 255.0) as u8));
    }
    // A cross at the pick pixel.
    for d in -6i64..=6 {
        for (x, y) in [
            (i64::from(px) + d, i64::from(py)),
            (i64::from(px), i64::from(py) + d),
        ] {
            if d.abs() > 1 && (0..i64::from(w)).contains(&x) && (0..i64::from(h)).contains(&y) {
                let at = (y as usize * w as usize + x as usize) * 3;
                rgb[at..at + 3].copy_from_slice(&[255, 0, 255]);
            }
        }
    }
    write_png(&o.out, w, h, &rgb)?;

    let covered = hits.iter().filter(|h| h.is_some()).count();
    println!(
        "rendered {}: {w}x{h}, {} rays in {elapsed:.2} s on {} threads, {covered} pixels hit",
        o.out.display(),
        hits.len(),
        rayon::current_num_threads()
    );
    match picked {
        Some(hit) => {
            let names: Vec<&str> = hit
                .node_path
                .iter()
                .filter_map(|id| scene.node(*id).map(|n| n.name()))
                .filter(|n| !n.is_empty())
                .collect();
            println!(
                "pick pixel ({px}, {py}): {} primitive {} at {:.3?}, highlighted",
                names.join("/"),
                hit.primitive_index,
                hit.world_point.to_array()
            );
        }
        None => println!("pick pixel ({px}, {py}): background"),
    }
    Ok(())
}

fn write_png(path: &Path, w: u32, h: u32, rgb: &[u8]) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(rgb))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
