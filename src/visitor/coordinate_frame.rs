//! Coordinate frames a query can be given in, and the viewport of a renderer.

use glam::{DMat4, DVec3};

use crate::intersectors::QueryError;

/// The frame an intersector's coordinates are given in (OSG's `CoordinateFrame`).
///
/// * `Model`: world coordinates of the scene.
/// * `View`: eye coordinates, after the view matrix.
/// * `Projection`: clip/NDC coordinates, after the projection (perspective divide done).
/// * `Window`: window coordinates, after the viewport: x and y in pixels, origin at the
///   viewport's bottom-left corner, y up (OSG's and OpenGL's convention), pixel `(i, j)`
///   covering `[i, i+1] x [j, j+1]`; z from 0 (near plane) to 1 (far plane). A renderer
///   with y down converts with [`Viewport::window_from_top_left`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CoordinateFrame {
    /// World coordinates.
    #[default]
    Model,
    /// Eye coordinates.
    View,
    /// Normalized device coordinates.
    Projection,
    /// Window (pixel) coordinates.
    Window,
}

impl CoordinateFrame {
    /// The frame's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            CoordinateFrame::Model => "MODEL",
            CoordinateFrame::View => "VIEW",
            CoordinateFrame::Projection => "PROJECTION",
            CoordinateFrame::Window => "WINDOW",
        }
    }
}

/// The depth range of normalized device coordinates the projection matrix produces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClipDepth {
    /// OpenGL (and OSG): NDC z in [-1, 1] (`glam::dcamera::rh::proj::opengl::perspective`).
    #[default]
    NegativeOneToOne,
    /// Vulkan, Direct3D, Metal, wgpu: NDC z in [0, 1] (`glam::dcamera::rh::proj::directx::perspective`).
    ZeroToOne,
}

/// A renderer's viewport: the window rectangle NDC x, y in [-1, 1] map to.
///
/// ```
/// use scene_intersect::visitor::Viewport;
/// let vp = Viewport::new(0.0, 0.0, 800.0, 600.0)?;
/// // The centre of the top-left pixel of a y-down window is (0.5, 599.5) in OSG's y-up frame.
/// assert_eq!(vp.window_from_top_left(0.5, 0.5), (0.5, 599.5));
/// # Ok::<(), scene_intersect::intersectors::QueryError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// Left edge, pixels.
    pub x: f64,
    /// Bottom edge (y up), pixels.
    pub y: f64,
    /// Width, pixels.
    pub width: f64,
    /// Height, pixels.
    pub height: f64,
    /// The projection's NDC depth range.
    pub clip_depth: ClipDepth,
}

impl Viewport {
    /// A viewport with OpenGL's depth range; width and height must be positive.
    pub fn new(x: f64, y: f64, width: f64, height: f64) -> Result<Self, QueryError> {
        let ok = [x, y, width, height].iter().all(|v| v.is_finite()) && width > 0.0 && height > 0.0;
        if !ok {
            return Err(QueryError::BadViewport);
        }
        Ok(Viewport {
            x,
            y,
            width,
            height,
            clip_depth: ClipDepth::NegativeOneToOne,
        })
    }

    /// The same viewport for a projection with another NDC depth range.
    pub fn with_clip_depth(mut self, clip_depth: ClipDepth) -> Self {
        self.clip_depth = clip_depth;
        self
    }

    /// Converts a position given from the viewport's top-left corner with y down (mouse
    /// events of most windowing systems) into window coordinates (y up). Pass
    /// `(px + 0.5, py + 0.5)` to aim at the centre of pixel `(px, py)`.
    pub fn window_from_top_left(&self, x: f64, y_down: f64) -> (f64, f64) {
        (self.x + x, self.y + self.height - y_down)
    }

    /// The matrix from NDC to window coordinates (OSG's window matrix).
    pub fn window_matrix(&self) -> DMat4 {
        let (z_scale, z_offset) = match self.clip_depth {
            ClipDepth::NegativeOneToOne => (0.5, 0.5),
            ClipDepth::ZeroToOne => (1.0, 0.0),
        };
        DMat4::from_translation(DVec3::new(
            self.x + self.width * 0.5,
            self.y + self.height * 0.5,
            z_offset,
        )) * DMat4::from_scale(DVec3::new(self.width * 0.5, self.height * 0.5, z_scale))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_matrix_maps_ndc_corners() {
        let vp = Viewport::new(10.0, 20.0, 200.0, 100.0).unwrap();
        let m = vp.window_matrix();
        // NDC (-1,-1,-1) -> window (10, 20, 0); NDC (1,1,1) -> (210, 120, 1).
        assert_eq!(
            m.project_point3(DVec3::splat(-1.0)),
            DVec3::new(10.0, 20.0, 0.0)
        );
        assert_eq!(m.project_point3(DVec3::ONE), DVec3::new(210.0, 120.0, 1.0));
        let m = vp.with_clip_depth(ClipDepth::ZeroToOne).window_matrix();
        assert_eq!(m.project_point3(DVec3::new(0.0, 0.0, 0.0)).z, 0.0);
    }

    #[test]
    fn bad_viewports_are_refused() {
        assert!(Viewport::new(0.0, 0.0, 0.0, 10.0).is_err());
        assert!(Viewport::new(0.0, 0.0, 10.0, f64::NAN).is_err());
    }
}
