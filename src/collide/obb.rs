//! Oriented bounding boxes and the 15-axis separating-axis test.

use glam::{DMat3, DQuat, DVec3};

/// A closed oriented box: `center + Σ sᵢ axes[i]` with `|sᵢ| ≤ half_extents[i]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obb {
    center: DVec3,
    axes: [DVec3; 3],
    half_extents: DVec3,
}

impl Obb {
    /// A box with the given centre, rotation and half extents.
    ///
    /// The rotation is normalised; a zero or non-finite quaternion is replaced by
    /// the identity. Negative half extents are replaced by their absolute values.
    ///
    /// ```
    /// use glam::{DQuat, DVec3};
    /// use scene_intersect::collide::Obb;
    /// let b = Obb::new(DVec3::ZERO, DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2), DVec3::new(2.0, 1.0, 1.0));
    /// assert!((b.axes()[0] - DVec3::Y).length() < 1e-15);
    /// ```
    pub fn new(center: DVec3, rotation: DQuat, half_extents: DVec3) -> Self {
        let len = rotation.length();
        let q = if len > 0.0 && len.is_finite() {
            rotation / len
        } else {
            DQuat::IDENTITY
        };
        let m = DMat3::from_quat(q);
        Self {
            center,
            axes: [m.x_axis, m.y_axis, m.z_axis],
            half_extents: half_extents.abs(),
        }
    }

    /// An axis-aligned box as an OBB.
    pub fn axis_aligned(center: DVec3, half_extents: DVec3) -> Self {
        Self::new(center, DQuat::IDENTITY, half_extents)
    }

    /// The centre.
    pub fn center(&self) -> DVec3 {
        self.center
    }

    /// The three orthonormal local axes (columns of the rotation).
    pub fn axes(&self) -> [DVec3; 3] {
        self.axes
    }

    /// The half extents along the local axes (all `>= 0`).
    pub fn half_extents(&self) -> DVec3 {
        self.half_extents
    }

    /// The eight corners.
    pub fn corners(&self) -> [DVec3; 8] {
        let mut out = [DVec3::ZERO; 8];
        for (k, c) in out.iter_mut().enumerate() {
            let sign = |bit: usize| if k & (1 << bit) != 0 { 1.0 } else { -1.0 };
            *c = self.center
                + sign(0) * self.half_extents.x * self.axes[0]
                + sign(1) * self.half_extents.y * self.axes[1]
                + sign(2) * self.half_extents.z * self.axes[2];
        }
        out
    }
}

/// An axis that separates two boxes, in the order the test tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeparatingAxis {
    /// Face normal `i` of the first box (`A.axes[i]`).
    FaceA(usize),
    /// Face normal `j` of the second box (`B.axes[j]`).
    FaceB(usize),
    /// Cross product `A.axes[a] × B.axes[b]` of two edge directions.
    Edge {
        /// Edge direction index of the first box.
        a: usize,
        /// Edge direction index of the second box.
        b: usize,
    },
}

/// Cosines below this from 1 make two edge directions "parallel": their cross
/// product is skipped (the face axes already cover that configuration).
const PARALLEL_EPSILON: f64 = 1e-9;

/// The first axis separating the closed boxes `a` and `b`, or `None` if they
/// intersect (touching counts as intersecting).
///
/// Separating-axis theorem (Gottschalk; Ericson §4.4.1) over 15 candidates: the
/// 3 face normals of `a`, the 3 of `b`, and the 9 cross products
/// `Aᵢ × Bⱼ`. With `R[i][j] = Aᵢ·Bⱼ` and `t` the centre offset in `a`'s frame,
/// an axis `L` separates iff `|t·L| > r_a + r_b`, where `r_a = Σ eᵃₖ |Aₖ·L|` and
/// `r_b = Σ eᵇₖ |Bₖ·L|`. For the edge axis `Aᵢ × Bⱼ` (with `i1, i2` and `j1, j2`
/// the other indices, cyclically):
/// `|t[i2] R[i1][j] − t[i1] R[i2][j]| > eᵃ[i1]|R[i2][j]| + eᵃ[i2]|R[i1][j]| +
/// eᵇ[j1]|R[i][j2]| + eᵇ[j2]|R[i][j1]|`.
/// Edge axes of (nearly) parallel edges (`|R[i][j]| > 1 − 1e-9`) are skipped:
/// they are degenerate and the face axes decide those cases.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::collide::{separating_axis_obb_obb, Obb, SeparatingAxis};
/// let a = Obb::axis_aligned(DVec3::ZERO, DVec3::ONE);
/// let b = Obb::axis_aligned(DVec3::new(3.0, 0.0, 0.0), DVec3::ONE);
/// assert_eq!(separating_axis_obb_obb(&a, &b), Some(SeparatingAxis::FaceA(0)));
/// ```
pub fn separating_axis_obb_obb(a: &Obb, b: &Obb) -> Option<SeparatingAxis> {
    let ea = a.half_extents.to_array();
    let eb = b.half_extents.to_array();
    let mut r = [[0.0; 3]; 3];
    let mut abs_r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = a.axes[i].dot(b.axes[j]);
            abs_r[i][j] = r[i][j].abs();
        }
    }
    let d = b.center - a.center;
    let t = [d.dot(a.axes[0]), d.dot(a.axes[1]), d.dot(a.axes[2])];

    for i in 0..3 {
        let ra = ea[i];
        let rb = eb[0] * abs_r[i][0] + eb[1] * abs_r[i][1] + eb[2] * abs_r[i][2];
        if t[i].abs() > ra + rb {
            return Some(SeparatingAxis::FaceA(i));
        }
    }
    for j in 0..3 {
        let ra = ea[0] * abs_r[0][j] + ea[1] * abs_r[1][j] + ea[2] * abs_r[2][j];
        let rb = eb[j];
        let dist = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        if dist.abs() > ra + rb {
            return Some(SeparatingAxis::FaceB(j));
        }
    }
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            if abs_r[i][j] > 1.0 - PARALLEL_EPSILON {
                continue;
            }
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let ra = ea[i1] * abs_r[i2][j] + ea[i2] * abs_r[i1][j];
            let rb = eb[j1] * abs_r[i][j2] + eb[j2] * abs_r[i][j1];
            let dist = t[i2] * r[i1][j] - t[i1] * r[i2][j];
            if dist.abs() > ra + rb {
                return Some(SeparatingAxis::Edge { a: i, b: j });
            }
        }
    }
    None
}

/// Do the closed oriented boxes intersect? `separating_axis_obb_obb(a, b).is_none()`.
///
/// ```
/// use glam::{DQuat, DVec3};
/// use scene_intersect::collide::{intersection_test_obb_obb, Obb};
/// let a = Obb::axis_aligned(DVec3::ZERO, DVec3::ONE);
/// // A box turned 45° about z reaches √2 along x: centred at x = 2.4 it overlaps a.
/// let b = Obb::new(DVec3::new(2.4, 0.0, 0.0), DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4), DVec3::ONE);
/// assert!(intersection_test_obb_obb(&a, &b));
/// ```
pub fn intersection_test_obb_obb(a: &Obb, b: &Obb) -> bool {
    separating_axis_obb_obb(a, b).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{FRAC_PI_4, SQRT_2};

    #[test]
    fn face_axes() {
        let a = Obb::axis_aligned(DVec3::ZERO, DVec3::new(1.0, 2.0, 3.0));
        // Along y: extents 2 + 1 = 3; centre offset 3 → touching (closed) → intersect.
        let b = Obb::axis_aligned(DVec3::new(0.0, 3.0, 0.0), DVec3::ONE);
        assert!(intersection_test_obb_obb(&a, &b));
        // Offset 3.0001 → separated by A's y face.
        let b = Obb::axis_aligned(DVec3::new(0.0, 3.0001, 0.0), DVec3::ONE);
        assert_eq!(
            separating_axis_obb_obb(&a, &b),
            Some(SeparatingAxis::FaceA(1))
        );
    }

    #[test]
    fn rotated_face_b_axis() {
        // A: unit cube rotated 45° about z, at the origin; its extent along x is √2.
        // B: axis-aligned, half extents (0.1, 5, 5), centred at x = √2 + 0.1 + δ.
        // Along A's axes (±45°), B is wide (5 in y), so only B's x face can separate.
        let a = Obb::new(DVec3::ZERO, DQuat::from_rotation_z(FRAC_PI_4), DVec3::ONE);
        let b = Obb::axis_aligned(
            DVec3::new(SQRT_2 + 0.1 + 0.01, 0.0, 0.0),
            DVec3::new(0.1, 5.0, 5.0),
        );
        assert_eq!(
            separating_axis_obb_obb(&a, &b),
            Some(SeparatingAxis::FaceB(0))
        );
        let b = Obb::axis_aligned(
            DVec3::new(SQRT_2 + 0.1 - 0.01, 0.0, 0.0),
            DVec3::new(0.1, 5.0, 5.0),
        );
        assert!(intersection_test_obb_obb(&a, &b));
    }

    /// Two unit cubes (half extent 1) whose edges cross: only an edge-edge axis separates.
    ///
    /// A is turned 45° about z: axes A0 = (1,1,0)/√2, A1 = (−1,1,0)/√2, A2 = z; its edge
    /// along z reaches y = √2. B is turned 45° about x: B0 = x, B1 = (0,1,1)/√2,
    /// B2 = (0,−1,1)/√2; its edge along x reaches y = −√2 from its centre. B's centre is
    /// at (0, 2√2 + δ, 0).
    ///
    /// Face axes: on A0 the offset is (2√2 + δ)/√2 = 2 + δ/√2, r_a = 1,
    /// r_b = |A0·B0| + |A0·B1| + |A0·B2| = 1/√2 + 1/2 + 1/2 → sum 2.707 > 2 + δ/√2 for
    /// δ = 0.1 (A1 alike; A2 and B0 have offset 0; B1, B2 symmetric to A0): no separation.
    /// Edge axes before A2×B0: A0×B0 = A1×B0 ∥ z (offset 0); A0×B1 ∥ (1,−1,1),
    /// A0×B2 ∥ (1,−1,−1), A1×B1 ∥ (1,1,−1), A1×B2 ∥ (1,1,1): offset (2√2+δ)/√3 ≈ 1.69,
    /// r_a = r_b = 2/√6 + 1/√3 ≈ 1.394 → sum 2.79: no separation.
    /// A2 × B0 = z × x = y: offset 2√2 + δ, r_a = √2, r_b = √2 → separates iff δ > 0.
    #[test]
    fn separated_only_by_edge_edge_axis() {
        let a = Obb::new(DVec3::ZERO, DQuat::from_rotation_z(FRAC_PI_4), DVec3::ONE);
        let b_at = |delta: f64| {
            Obb::new(
                DVec3::new(0.0, 2.0 * SQRT_2 + delta, 0.0),
                DQuat::from_rotation_x(FRAC_PI_4),
                DVec3::ONE,
            )
        };
        assert_eq!(
            separating_axis_obb_obb(&a, &b_at(0.1)),
            Some(SeparatingAxis::Edge { a: 2, b: 0 })
        );
        assert_eq!(
            separating_axis_obb_obb(&b_at(0.1), &a),
            Some(SeparatingAxis::Edge { a: 0, b: 2 })
        );
        assert!(intersection_test_obb_obb(&a, &b_at(-0.1)));
        // AABB-style face tests alone would call them overlapping: the bounding boxes
        // (|x| ≤ √2 and |y − c| ≤ √2) overlap for δ = 0.1.
    }

    #[test]
    fn contained_and_identical() {
        let a = Obb::axis_aligned(DVec3::ZERO, DVec3::splat(5.0));
        let b = Obb::new(DVec3::ONE, DQuat::from_rotation_y(0.3), DVec3::splat(0.5));
        assert!(intersection_test_obb_obb(&a, &b));
        assert!(intersection_test_obb_obb(&b, &b));
    }

    #[test]
    fn degenerate_boxes() {
        // Zero quaternion → identity; negative extents → absolute values.
        let a = Obb::new(
            DVec3::ZERO,
            DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            -DVec3::ONE,
        );
        assert_eq!(a.axes(), [DVec3::X, DVec3::Y, DVec3::Z]);
        assert_eq!(a.half_extents(), DVec3::ONE);
        // A flat box (zero thickness) touching a cube face.
        let flat = Obb::axis_aligned(DVec3::new(1.0, 0.0, 0.0), DVec3::new(0.0, 1.0, 1.0));
        assert!(intersection_test_obb_obb(&a, &flat));
        // A point box just outside.
        let p = Obb::axis_aligned(DVec3::new(1.0, 1.0, 1.0001), DVec3::ZERO);
        assert!(!intersection_test_obb_obb(&a, &p));
    }

    #[test]
    fn corners_of_a_box() {
        let b = Obb::axis_aligned(DVec3::new(1.0, 0.0, 0.0), DVec3::new(1.0, 2.0, 3.0));
        let c = b.corners();
        assert_eq!(c[0], DVec3::new(0.0, -2.0, -3.0));
        assert_eq!(c[7], DVec3::new(2.0, 2.0, 3.0));
    }
}
