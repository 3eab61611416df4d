//! Picking through the library's WINDOW frame: what a renderer does on a mouse click.
//!
//! See [`super::camera`] for the pixel convention.

use scene_intersect::prelude::*;

use super::camera::Camera;

/// The nearest triangle under window position `(x, y_down)`, measured in pixels from
/// the top-left corner of the image (a mouse position): a WINDOW-frame segment from the
/// near to the far plane, limit `Nearest`. `visitor` is configured with the camera.
pub fn pick(
    scene: &SceneGraph,
    root: NodeId,
    camera: &Camera,
    visitor: &mut IntersectionVisitor,
    x: f64,
    y_down: f64,
) -> Result<Option<LineSegmentHit>, QueryError> {
    camera.configure(visitor)?;
    let (wx, wy) = camera.viewport()?.window_from_top_left(x, y_down);
    let mut segment =
        LineSegmentIntersector::from_window(wx, wy)?.with_limit(IntersectionLimit::Nearest);
    visitor.apply(scene, root, &mut segment)?;
    Ok(segment.take_intersections().into_iter().next())
}
