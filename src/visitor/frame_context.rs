//! The view, projection and viewport a visitor maps non-MODEL queries through.

use glam::DMat4;

use super::{CoordinateFrame, Viewport};
use crate::intersectors::QueryError;

/// A query frame's matrices: `frame_to_world` maps the query's coordinates into world
/// space (projective for PROJECTION and WINDOW), `world_to_frame` is its inverse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameMatrices {
    /// Frame to world.
    pub frame_to_world: DMat4,
    /// World to frame.
    pub world_to_frame: DMat4,
}

/// The camera a visitor knows about (OSG's view, projection and window matrices). Missing
/// matrices count as identity, as in OSG.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameContext {
    /// World to eye.
    pub view: Option<DMat4>,
    /// Eye to clip.
    pub projection: Option<DMat4>,
    /// NDC to window.
    pub viewport: Option<Viewport>,
}

impl FrameContext {
    /// The matrices of `frame`; an error when they cannot be inverted.
    ///
    /// Inlined for MODEL (identities, known to the caller's compiler: every query
    /// begins with this), the camera frames computed out of line.
    #[inline]
    pub fn matrices(&self, frame: CoordinateFrame) -> Result<FrameMatrices, QueryError> {
        if frame == CoordinateFrame::Model {
            return Ok(FrameMatrices {
                frame_to_world: DMat4::IDENTITY,
                world_to_frame: DMat4::IDENTITY,
            });
        }
        self.camera_matrices(frame)
    }

    /// [`matrices`](Self::matrices) of a frame other than MODEL.
    #[inline(never)]
    fn camera_matrices(&self, frame: CoordinateFrame) -> Result<FrameMatrices, QueryError> {
        let view = self.view.unwrap_or(DMat4::IDENTITY);
        let projection = self.projection.unwrap_or(DMat4::IDENTITY);
        let window = self.viewport.map_or(DMat4::IDENTITY, |v| v.window_matrix());
        let world_to_frame = match frame {
            CoordinateFrame::Model | CoordinateFrame::View => view,
            CoordinateFrame::Projection => projection * view,
            CoordinateFrame::Window => window * projection * view,
        };
        let frame_to_world = world_to_frame.inverse();
        let det = world_to_frame.determinant();
        if !(world_to_frame.is_finite()
            && frame_to_world.is_finite()
            && det != 0.0
            && det.is_finite())
        {
            return Err(QueryError::SingularFrame(frame.name()));
        }
        Ok(FrameMatrices {
            frame_to_world,
            world_to_frame,
        })
    }
}
