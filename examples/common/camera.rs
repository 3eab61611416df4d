//! A renderer's camera as the picking examples use it: eye, target, vertical field of
//! view and an image size, turned into the view, projection and viewport a GPU renderer
//! would use (OpenGL conventions: `look_at_rh`, `perspective_rh_gl`, NDC z in [-1, 1],
//! viewport origin at the bottom-left).
//!
//! Pixel convention: pixel `(px, py)` counts from the top-left of the image, y down, and
//! covers `[px, px + 1] x [py, py + 1]` there; its centre is at window coordinates
//! `Viewport::window_from_top_left(px + 0.5, py + 0.5)` (y up, OSG's window frame).

use glam::{DMat4, DVec3};
use scene_intersect::bounding::BoundingSphere;
use scene_intersect::prelude::*;

/// A perspective camera and its image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position, world.
    pub eye: DVec3,
    /// Point looked at, world.
    pub target: DVec3,
    /// Up direction, world.
    pub up: DVec3,
    /// Vertical field of view, degrees.
    pub fov_y_degrees: f64,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Near plane distance (> 0).
    pub near: f64,
    /// Far plane distance (> near).
    pub far: f64,
}

impl Camera {
    /// A camera at `eye` looking at `target`, +Y up, with near and far planes that hold
    /// the whole of `scene_bound`.
    pub fn looking(
        eye: DVec3,
        target: DVec3,
        fov_y_degrees: f64,
        (width, height): (u32, u32),
        scene_bound: &BoundingSphere,
    ) -> Camera {
        let distance = eye.distance(scene_bound.center);
        let r = scene_bound.radius.max(1e-6);
        let far = distance + r * 1.05;
        let near = (distance - r * 1.05).max(far * 1e-5);
        Camera {
            eye,
            target,
            up: DVec3::Y,
            fov_y_degrees,
            width,
            height,
            near,
            far,
        }
    }

    /// A camera looking at the centre of `bound` from direction `from` (eye minus
    /// target), far enough for the sphere to fill the view vertically.
    pub fn framing(
        bound: &BoundingSphere,
        from: DVec3,
        fov_y_degrees: f64,
        size: (u32, u32),
    ) -> Camera {
        let half = (fov_y_degrees.to_radians() * 0.5).sin().max(1e-3);
        let distance = bound.radius / half;
        let eye = bound.center + from.normalize_or(DVec3::Z) * distance;
        Camera::looking(eye, bound.center, fov_y_degrees, size, bound)
    }

    /// World to eye.
    pub fn view(&self) -> DMat4 {
        glam::dcamera::rh::view::look_at_mat4(self.eye, self.target, self.up)
    }

    /// Eye to clip (OpenGL depth range).
    pub fn projection(&self) -> DMat4 {
        glam::dcamera::rh::proj::opengl::perspective(
            self.fov_y_degrees.to_radians(),
            f64::from(self.width) / f64::from(self.height),
            self.near,
            self.far,
        )
    }

    /// The viewport covering the whole image.
    pub fn viewport(&self) -> Result<Viewport, QueryError> {
        Viewport::new(0.0, 0.0, f64::from(self.width), f64::from(self.height))
    }

    /// Gives the visitor this camera's view, projection and viewport.
    pub fn configure(&self, visitor: &mut IntersectionVisitor) -> Result<(), QueryError> {
        visitor
            .set_view_matrix(self.view())
            .set_projection_matrix(self.projection())
            .set_viewport(self.viewport()?);
        Ok(())
    }

    /// Checks the numbers a user gave.
    pub fn validate(&self) -> Result<(), String> {
        if self.width == 0 || self.height == 0 {
            return Err("the image size must be positive".into());
        }
        if !(self.fov_y_degrees > 0.0 && self.fov_y_degrees < 180.0) {
            return Err(format!(
                "the field of view must be in (0, 180) degrees, not {}",
                self.fov_y_degrees
            ));
        }
        if !self.eye.is_finite() || !self.target.is_finite() || self.eye == self.target {
            return Err("the eye and the target must be finite and distinct".into());
        }
        if self.up.cross(self.target - self.eye).length_squared() == 0.0 {
            return Err("the view direction must not be vertical (+Y is up)".into());
        }
        if !(self.near > 0.0 && self.far > self.near && self.far.is_finite()) {
            return Err(format!(
                "need 0 < near < far, not near {} far {}",
                self.near, self.far
            ));
        }
        Ok(())
    }
}
