//! The ray-cast render of `examples/render.rs` (one WINDOW-frame pick per pixel centre)
//! must cover the same pixels as an independent rasterisation of the same world
//! triangles with the same view, projection and viewport: the proof that the visitor
//! handles window coordinates, view, projection and viewport as a GPU renderer does.
//!
//! The rasteriser here shares nothing with the picking path but the list of world
//! triangles: it projects each vertex with glam (`projection * view`, perspective divide,
//! then the viewport mapping written out by hand) and tests pixel centres
//! `(px + 0.5, py + 0.5)` (top-left origin, y down) against edge functions, edges
//! included, both windings.
//!
//! Uses `../shared/data/littlest_tokyo.glb` (141 802 triangles) at 97 x 65 pixels; odd
//! sizes put the window centre on the centre pixel's centre. A 321 x 241 variant is
//! `#[ignore]`d (run it with `--release -- --ignored`). Skipped with a notice when
//! `../shared` is absent.

#[allow(dead_code)]
#[path = "../examples/common/camera.rs"]
mod camera;
#[path = "../examples/common/ray_cast.rs"]
mod ray_cast;
#[allow(dead_code)]
#[path = "../examples/common/scene_walk.rs"]
mod scene_walk;
#[path = "../examples/common/window_pick.rs"]
mod window_pick;

use std::path::PathBuf;

use camera::Camera;
use glam::{DVec2, DVec3, DVec4};
use scene_intersect::prelude::*;

fn shared_scene(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipping: {} is absent", path.display());
        None
    }
}

/// The camera of the test: looking at the centre of the scene's bounding sphere from
/// above and to the side, 1.6 radii away (outside the sphere, so near and far planes
/// hold the whole scene; the diorama fills about half the view).
fn camera_for(scene: &SceneGraph, root: NodeId, size: (u32, u32)) -> Camera {
    let bound = scene.node_bound(root).expect("root bound");
    let eye = bound.center + DVec3::new(1.0, 0.6, 1.3).normalize() * bound.radius * 1.6;
    Camera::looking(eye, bound.center, 40.0, size, &bound)
}

/// Coverage by rasterising every world triangle at pixel centres.
fn rasterise(triangles: &[[DVec3; 3]], camera: &Camera) -> Vec<bool> {
    let (w, h) = (camera.width as usize, camera.height as usize);
    let clip_from_world = camera.projection() * camera.view();
    let mut covered = vec![false; w * h];
    for t in triangles {
        let clip = t.map(|p| clip_from_world * DVec4::new(p.x, p.y, p.z, 1.0));
        // The camera's near and far planes hold the whole scene: no clipping needed.
        for c in &clip {
            assert!(
                c.w > 0.0 && c.z >= -c.w && c.z <= c.w,
                "vertex outside the depth range"
            );
        }
        // NDC, then window pixels measured from the top-left, y down.
        let s = clip.map(|c| {
            let ndc = DVec2::new(c.x / c.w, c.y / c.w);
            DVec2::new(
                (ndc.x + 1.0) * 0.5 * w as f64,
                (1.0 - ndc.y) * 0.5 * h as f64,
            )
        });
        let area = (s[1] - s[0]).perp_dot(s[2] - s[0]);
        if area == 0.0 {
            continue; // seen edge-on: a segment is never hit by a coplanar segment
        }
        let lo = s[0].min(s[1]).min(s[2]).floor().max(DVec2::ZERO);
        let hi = s[0]
            .max(s[1])
            .max(s[2])
            .ceil()
            .min(DVec2::new(w as f64, h as f64));
        for py in lo.y as usize..hi.y as usize {
            for px in lo.x as usize..hi.x as usize {
                let p = DVec2::new(px as f64 + 0.5, py as f64 + 0.5);
                let e = [
                    (s[1] - s[0]).perp_dot(p - s[0]),
                    (s[2] - s[1]).perp_dot(p - s[1]),
                    (s[0] - s[2]).perp_dot(p - s[2]),
                ];
                let inside = if area > 0.0 {
                    e.iter().all(|v| *v >= 0.0)
                } else {
                    e.iter().all(|v| *v <= 0.0)
                };
                if inside {
                    covered[py * w + px] = true;
                }
            }
        }
    }
    covered
}

/// True when pixel `i` of `mask` has a 4-neighbour of the other value: a silhouette edge.
fn on_edge(mask: &[bool], w: usize, h: usize, i: usize) -> bool {
    let (x, y) = (i % w, i / w);
    let mut neighbours = Vec::new();
    if x > 0 {
        neighbours.push(i - 1);
    }
    if x + 1 < w {
        neighbours.push(i + 1);
    }
    if y > 0 {
        neighbours.push(i - w);
    }
    if y + 1 < h {
        neighbours.push(i + w);
    }
    neighbours.iter().any(|&j| mask[j] != mask[i])
}

fn compare(size: (u32, u32)) {
    let Some(path) = shared_scene("littlest_tokyo.glb") else {
        return;
    };
    let (scene, import) = load_gltf(&path).expect("littlest_tokyo loads");
    let camera = camera_for(&scene, import.root, size);
    let (w, h) = (size.0 as usize, size.1 as usize);

    let hits = ray_cast::ray_cast(&scene, import.root, &camera).expect("ray cast");
    let traced: Vec<bool> = hits.iter().map(Option::is_some).collect();
    let triangles = scene_walk::WorldTriangles::of(&scene, import.root, u32::MAX);
    let raster = rasterise(&triangles, &camera);

    let covered = raster.iter().filter(|c| **c).count();
    let differ: Vec<usize> = (0..w * h).filter(|&i| traced[i] != raster[i]).collect();
    let interior: Vec<(usize, usize)> = differ
        .iter()
        .filter(|&&i| !on_edge(&raster, w, h, i))
        .map(|&i| (i % w, i / w))
        .collect();
    let agreement = 1.0 - differ.len() as f64 / (w * h) as f64;
    eprintln!(
        "{w}x{h}: raster covers {covered} pixels, ray cast {}; {} differ ({:.3}% agree), {} \
         of them off the silhouette edges: {interior:?}",
        traced.iter().filter(|c| **c).count(),
        differ.len(),
        agreement * 100.0,
        interior.len()
    );
    assert!(
        covered > w * h / 10,
        "the camera should see the scene (covers {covered})"
    );
    assert!(agreement >= 0.98, "agreement {agreement}");
    assert!(
        differ.len() * 50 <= covered,
        "more than 2% of the covered pixels differ"
    );
    assert!(
        interior.is_empty(),
        "pixels differ away from silhouette edges: {interior:?}"
    );

    // A pick at the centre of the window (odd sizes: the centre pixel's centre) is the
    // render's centre pixel.
    let mut visitor = IntersectionVisitor::new();
    let centre = window_pick::pick(
        &scene,
        import.root,
        &camera,
        &mut visitor,
        f64::from(size.0) * 0.5,
        f64::from(size.1) * 0.5,
    )
    .expect("pick");
    let centre_pixel = &hits[(h / 2) * w + w / 2];
    assert!(centre.is_some(), "the centre of the view is on the scene");
    assert_eq!(&centre, centre_pixel);
}

#[test]
fn ray_cast_render_matches_rasterisation_of_littlest_tokyo() {
    compare((97, 65));
}

#[test]
#[ignore = "larger image: a few seconds in release, much longer in a debug build"]
fn ray_cast_render_matches_rasterisation_of_littlest_tokyo_large() {
    compare((321, 241));
}
