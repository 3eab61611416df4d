//! How far a query reaches as a drawable's own frame sees it, for the intersectors that
//! cull in that frame but test in world space: the ball, and a segment's picking
//! tolerance for points and lines. Their culls must hold everything the world-space
//! tests can find, however the frame turns, scales and rounds.

use glam::{DMat3, DMat4, DVec3};

/// Largest factor by which `m` can stretch a vector, bounded from above by the
/// Frobenius norm of its linear part: conservative and cheap.
fn max_scale(m: &DMat4) -> f64 {
    let m3 = DMat3::from_mat4(*m);
    (m3.x_axis.length_squared() + m3.y_axis.length_squared() + m3.z_axis.length_squared()).sqrt()
}

/// What a frame does to a query's reach: how far its inverse stretches, per axis and
/// at most, and how much rounding moving points between it and world space allows for.
/// Computed once per frame a culling query meets, from the inverse's rows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameReach {
    /// The Frobenius norm of the inverse's linear part ([`max_scale`] of the inverse).
    inverse_scale: f64,
    /// The frame's condition number: the product of the [`max_scale`]s of its matrix
    /// and of its inverse.
    pub condition: f64,
    /// An upper bound on the inverse's largest stretch (the spectral norm): the square
    /// root of Gershgorin's bound on the largest eigenvalue of `rows · rowsᵀ`, or the
    /// Frobenius norm where that is smaller. Exact when the rows are at right angles,
    /// as the rows of a turn-and-scale frame's inverse (a glTF node's) are; the
    /// Frobenius norm alone is √3 times the stretch of a turn, and the ball it made in
    /// a turned building's frame held 5 times the volume it needed. (Its rounding, a
    /// few units of `2^-53` of the Frobenius norm, is covered by [`rounding`].)
    ///
    /// [`rounding`]: Self::rounding
    pub largest_stretch: f64,
    /// The lengths of the inverse's rows: how far it stretches along each axis of the
    /// frame (a world ball of radius `r` spans `r` times these about its centre there).
    pub row_lengths: DVec3,
    /// The max-norm of the frame's translation.
    translation: f64,
}

impl FrameReach {
    /// The reach of the frame of `local_to_world`, whose inverse is `world_to_local`.
    #[inline]
    pub fn of(local_to_world: &DMat4, world_to_local: &DMat4) -> FrameReach {
        let rows = DMat3::from_mat4(*world_to_local).transpose();
        let [x, y, z] = [rows.x_axis, rows.y_axis, rows.z_axis];
        let squares = DVec3::new(x.length_squared(), y.length_squared(), z.length_squared());
        let inverse_scale = (squares.x + squares.y + squares.z).sqrt();
        let (xy, yz, zx) = (x.dot(y).abs(), y.dot(z).abs(), z.dot(x).abs());
        let gershgorin = (squares.x + xy + zx)
            .max(squares.y + xy + yz)
            .max(squares.z + yz + zx);
        FrameReach {
            inverse_scale,
            condition: max_scale(local_to_world) * inverse_scale,
            largest_stretch: gershgorin.sqrt().min(inverse_scale),
            row_lengths: squares.map(f64::sqrt),
            translation: local_to_world.w_axis.truncate().abs().max_element(),
        }
    }

    /// How far, in this frame, the culls may see a point that the exact world-space
    /// tests find within reach of the query: what the culls' shapes are grown by.
    /// `magnitude` bounds the query's reach from the world origin in the max-norm (for
    /// a ball `|c| + r`, for a segment its farther end plus the tolerance).
    ///
    /// Such a point lies within `magnitude` of the world origin, and the frame's origin
    /// within its translation. Moving the point from the frame to world space rounds it
    /// by a few units of `2^-53` of their sum, times the condition (its coordinates in
    /// the frame may be that much larger); the frame's computed inverse, which moves
    /// the query here, is off by about as much (the inverses of far frames are the
    /// least accurate). Seen in the frame, both are scaled by up to `inverse_scale`.
    /// Allowed as `2 ε (16 + 8 condition)` times the sum (`ε` is `f64::EPSILON`; the 2
    /// turns the max-norms into bounds of the Euclidean norms), they cover the
    /// rounding of the stretches too. Near the origin this is nothing beside the culls'
    /// padding. Far out it is not: before it was allowed, balls of radius 0 at a
    /// triangle's corner, which the exact test hits, were culled in the corner's frame,
    /// half of them 10^9 units out under uneven scales.
    #[inline]
    pub fn rounding(&self, magnitude: f64) -> f64 {
        2.0 * (magnitude + self.translation)
            * self.inverse_scale
            * f64::EPSILON
            * (16.0 + 8.0 * self.condition)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, DVec3};

    #[test]
    fn the_largest_stretch_bound_is_exact_for_right_angled_rows_and_never_short() {
        let stretch_of = |m: DMat3| {
            let inverse = DMat4::from_mat3(m);
            FrameReach::of(&inverse.inverse(), &inverse).largest_stretch
        };
        // Right-angled rows: the longest row's length.
        let turn = DMat3::from_quat(DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0));
        let inverse = DMat3::from_diagonal(DVec3::new(0.5, 0.125, 0.25)) * turn.transpose();
        assert!((stretch_of(inverse) - 0.5).abs() <= 1e-15);
        // Any map: at least the true largest stretch (by power iteration on MᵀM).
        let mut rng = crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let mut c = || rng.next() * 2.0 - 1.0;
            let m = DMat3::from_cols(
                DVec3::new(c(), c(), c()),
                DVec3::new(c(), c(), c()),
                DVec3::new(c(), c(), c()),
            );
            let (gram, mut v) = (m.transpose() * m, DVec3::new(1.0, 0.7, 0.3));
            for _ in 0..200 {
                v = (gram * v).normalize();
            }
            let stretch = (m * v).length();
            assert!(stretch_of(m) >= stretch * (1.0 - 1e-12), "{m}");
        }
    }

    #[test]
    fn the_rounding_allowed_grows_with_distance_and_condition() {
        // Frames whose inverse stretches by at most 1, of the given translation and
        // condition (3 is a turn's: Frobenius norms of √3 each way).
        let reach = |translation: f64, condition: f64| FrameReach {
            inverse_scale: 1.0,
            condition,
            largest_stretch: 1.0,
            row_lengths: DVec3::ONE,
            translation,
        };
        // A frame near the origin allows nothing the culls' padding would notice; one
        // 10^12 out allows the ~10^-4 a world point is rounded by there.
        assert!(reach(100.0, 3.0).rounding(10.0) < 1e-11);
        let far = reach(1e12, 3.0).rounding(10.0);
        assert!(far > 1.2e-4 && far < 0.1, "{far}");
        // Ten times the condition, over six times the allowance (16 + 8 condition).
        let skewed = reach(1e12, 30.0).rounding(10.0);
        assert!(skewed > 6.0 * far, "{skewed}");
    }
}
