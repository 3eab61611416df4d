//! Picking as a renderer does it: a window position (a mouse event, pixels from the
//! top-left) and a camera give the nearest triangle under the cursor.
//!
//! ```text
//! cargo run --release --example pick -- [--at X,Y] [camera options]   (--help lists them)
//! ```
//!
//! The position is converted to OSG's window frame (y up) with
//! `Viewport::window_from_top_left`, then `LineSegmentIntersector::from_window` with
//! `IntersectionLimit::Nearest` runs through an `IntersectionVisitor` given the camera's
//! view, projection and viewport. Prints the node path, the glTF names, the world point,
//! the world normal and the distance from the eye.

#[path = "common/camera.rs"]
mod camera;
#[path = "common/view_args.rs"]
mod view_args;
#[path = "common/window_pick.rs"]
mod window_pick;

use std::process::ExitCode;

use scene_intersect::prelude::*;
use view_args::{parse_pair, ViewArgs, VIEW_USAGE};

fn usage() -> String {
    format!(
        "usage: pick [--at X,Y] [options]\n  --at X,Y            window position, pixels from \
         the top-left, y down (default: the centre)\n{VIEW_USAGE}"
    )
}

fn main() -> ExitCode {
    let mut view = ViewArgs::default();
    let mut at = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            println!("{}", usage());
            return ExitCode::SUCCESS;
        }
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let taken = if flag == "--at" {
            value().and_then(|v| parse_pair("--at", &v)).map(|p| {
                at = Some(p);
                true
            })
        } else {
            view.take(&flag, &mut value)
        };
        match taken {
            Ok(true) => {}
            Ok(false) => {
                eprintln!("pick: unknown option `{flag}`\n\n{}", usage());
                return ExitCode::from(2);
            }
            Err(message) => {
                eprintln!("pick: {message}\n\n{}", usage());
                return ExitCode::from(2);
            }
        }
    }
    match run(&view, at) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("pick: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(view: &ViewArgs, at: Option<(f64, f64)>) -> Result<(), String> {
    let (scene, import) =
        load_gltf(&view.scene).map_err(|e| format!("cannot load {}: {e}", view.scene.display()))?;
    let bound = scene
        .node_bound(import.root)
        .filter(|b| !b.is_empty())
        .ok_or("the scene is empty")?;
    let camera = view.camera(&bound)?;
    let (x, y) = at.unwrap_or((
        f64::from(camera.width) * 0.5,
        f64::from(camera.height) * 0.5,
    ));
    let viewport = camera.viewport().map_err(|e| e.to_string())?;
    let (wx, wy) = viewport.window_from_top_left(x, y);
    println!(
        "camera: eye {:.3?} target {:.3?} fov {}° viewport {}x{} near {:.3} far {:.3}",
        camera.eye.to_array(),
        camera.target.to_array(),
        camera.fov_y_degrees,
        camera.width,
        camera.height,
        camera.near,
        camera.far
    );
    println!("pick at ({x}, {y}) from the top-left = window ({wx}, {wy}), y up");
    let mut visitor = IntersectionVisitor::new();
    let hit = window_pick::pick(&scene, import.root, &camera, &mut visitor, x, y)
        .map_err(|e| format!("pick: {e}"))?;
    let Some(hit) = hit else {
        println!("nothing under the cursor");
        return Ok(());
    };
    let names: Vec<&str> = hit
        .node_path
        .iter()
        .filter_map(|id| scene.node(*id))
        .map(|n| {
            if n.name().is_empty() {
                "(unnamed)"
            } else {
                n.name()
            }
        })
        .collect();
    println!("node path: {}", names.join(" / "));
    println!(
        "drawable: {} ({}), primitive {}",
        scene.drawable_name(hit.drawable).unwrap_or("(unnamed)"),
        import
            .drawable_name(&hit.node_path, hit.drawable)
            .unwrap_or_else(|| "-".into()),
        hit.primitive_index
    );
    println!("world point: {:.4?}", hit.world_point.to_array());
    println!("world normal: {:.4?}", hit.world_normal.to_array());
    println!(
        "distance from the eye: {:.4} (ratio {:.6} along the near-far segment)",
        hit.world_point.distance(camera.eye),
        hit.ratio
    );
    Ok(())
}
