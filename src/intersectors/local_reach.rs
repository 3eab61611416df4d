//! How far a query reaches as a drawable's own frame sees it, for the intersectors that
//! cull in that frame but test in world space: the ball, and a segment's picking
//! tolerance for points and lines. Their culls must hold everything the world-space
//! tests can find, however the frame turns, scales and rounds.

use glam::{DMat3, DMat4};

/// Largest factor by which `m` can stretch a vector, bounded from above by the
/// Frobenius norm of its linear part: conservative and cheap.
pub(crate) fn max_scale(m: &DMat4) -> f64 {
    let m3 = DMat3::from_mat4(*m);
    (m3.x_axis.length_squared() + m3.y_axis.length_squared() + m3.z_axis.length_squared()).sqrt()
}

/// An upper bound on the largest stretch (the spectral norm) of the linear map whose
/// rows are `rows` and whose Frobenius norm is `frobenius`: the square root of
/// Gershgorin's bound on the largest eigenvalue of `rows · rowsᵀ`, or the Frobenius
/// norm where that is smaller. Exact when the rows are at right angles, as the rows
/// of a turn-and-scale frame's inverse (a glTF node's) are; the Frobenius norm alone
/// is √3 times the stretch of a turn, and the ball it made in a turned building's
/// frame held 5 times the volume it needed. (Its rounding, a few units of `2^-53` of
/// the Frobenius norm, is covered by [`frame_rounding`].)
pub(crate) fn largest_stretch(rows: &DMat3, frobenius: f64) -> f64 {
    let [x, y, z] = [rows.x_axis, rows.y_axis, rows.z_axis];
    let (xy, yz, zx) = (x.dot(y).abs(), y.dot(z).abs(), z.dot(x).abs());
    let gershgorin = (x.length_squared() + xy + zx)
        .max(y.length_squared() + xy + yz)
        .max(z.length_squared() + yz + zx);
    gershgorin.sqrt().min(frobenius)
}

/// How far, in a frame of condition `condition` (the product of the [`max_scale`]s of
/// its matrix and of its inverse) whose inverse's largest scale is at most
/// `inverse_scale`, the culls may see a point that the exact world-space tests find
/// within reach of the query: what the culls' shapes are grown by. `magnitude` bounds
/// the query's reach from the world origin (for a ball `|c| + r`, for a segment its
/// farther end plus the tolerance) and `translation` the frame's origin, both in the
/// max-norm.
///
/// Such a point lies within `magnitude` of the world origin. Moving it from the frame
/// to world space rounds it by a few units of `2^-53` of `magnitude + translation`,
/// times the condition (its coordinates in the frame may be that much larger); the
/// frame's computed inverse, which moves the query here, is off by about as much (the
/// inverses of far frames are the least accurate). Seen in the frame, both are scaled
/// by up to `inverse_scale`. Allowed as `2 ε (16 + 8 condition)` times the sum (`ε` is
/// `f64::EPSILON`; the 2 turns the max-norms into bounds of the Euclidean norms), they
/// cover the rounding of the stretch and the extents too. Near the origin this is
/// nothing beside the culls' padding. Far out it is not: before it was allowed, balls
/// of radius 0 at a triangle's corner, which the exact test hits, were culled in the
/// corner's frame, half of them 10^9 units out under uneven scales.
pub(crate) fn frame_rounding(
    magnitude: f64,
    translation: f64,
    inverse_scale: f64,
    condition: f64,
) -> f64 {
    2.0 * (magnitude + translation) * inverse_scale * f64::EPSILON * (16.0 + 8.0 * condition)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, DVec3};

    #[test]
    fn the_largest_stretch_bound_is_exact_for_right_angled_rows_and_never_short() {
        let stretch_of =
            |m: DMat3| largest_stretch(&m.transpose(), max_scale(&DMat4::from_mat3(m)));
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
        // A frame near the origin allows nothing the culls' padding would notice; one
        // 10^12 out allows the ~10^-4 a world point is rounded by there.
        assert!(frame_rounding(10.0, 100.0, 1.0, 3.0) < 1e-11);
        let far = frame_rounding(10.0, 1e12, 1.0, 3.0);
        assert!(far > 1.2e-4 && far < 0.1, "{far}");
        // Ten times the condition, over six times the allowance (16 + 8 condition).
        let skewed = frame_rounding(10.0, 1e12, 1.0, 30.0);
        assert!(skewed > 6.0 * far, "{skewed}");
    }
}
