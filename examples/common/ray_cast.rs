//! A ray-cast image through the picking API: one WINDOW-frame segment per pixel centre,
//! the proof that window coordinates, view, projection and viewport are handled as a GPU
//! renderer handles them. See [`super::camera`] for the pixel convention.

use rayon::prelude::*;
use scene_intersect::prelude::*;

use super::camera::Camera;
use super::window_pick::pick;

/// The nearest hit through the centre of pixel `(px, py)` (top-left origin).
pub fn pick_pixel(
    scene: &SceneGraph,
    root: NodeId,
    camera: &Camera,
    visitor: &mut IntersectionVisitor,
    px: u32,
    py: u32,
) -> Result<Option<LineSegmentHit>, QueryError> {
    pick(
        scene,
        root,
        camera,
        visitor,
        f64::from(px) + 0.5,
        f64::from(py) + 0.5,
    )
}

/// Every pixel's nearest hit, row-major from the top-left, rows in parallel (each rayon
/// task with its own visitor; the scene is shared as `&SceneGraph`).
pub fn ray_cast(
    scene: &SceneGraph,
    root: NodeId,
    camera: &Camera,
) -> Result<Vec<Option<LineSegmentHit>>, QueryError> {
    let rows: Vec<Vec<Option<LineSegmentHit>>> = (0..camera.height)
        .into_par_iter()
        .map_init(IntersectionVisitor::new, |visitor, py| {
            (0..camera.width)
                .map(|px| pick_pixel(scene, root, camera, visitor, px, py))
                .collect::<Result<Vec<_>, QueryError>>()
        })
        .collect::<Result<_, _>>()?;
    Ok(rows.into_iter().flatten().collect())
}
