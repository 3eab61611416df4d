//! [`Polytope`]: a convex region bounded by planes, and the usual ways to build one.

use glam::{DMat4, DQuat, DVec3, DVec4};
use smallvec::SmallVec;

use super::box_planes::{box_of_planes, oriented_box_planes, OrientedBox, PlaneBox};
use super::QueryError;
use crate::visitor::ClipDepth;

/// The largest number of planes a polytope may have.
pub const MAX_PLANES: usize = 64;

/// A closed convex polytope: the points `p` with `a·x + b·y + c·z + d >= 0` for every
/// plane `(a, b, c, d)` (normals point inward).
///
/// ```
/// use scene_intersect::intersectors::Polytope;
/// use glam::{DQuat, DVec3};
/// // A 4 x 2 x 1.5 m vehicle box, its front (+Z) plane last.
/// let p = Polytope::from_oriented_box(DVec3::new(10.0, 0.75, 0.0), DVec3::new(1.0, 0.75, 2.0), DQuat::IDENTITY)?;
/// assert!(p.contains(DVec3::new(10.5, 0.5, 1.9)));
/// assert!(!p.contains(DVec3::new(10.5, 0.5, 2.1)));
/// assert_eq!(p.planes().last().unwrap().z, -1.0);
/// # Ok::<(), scene_intersect::intersectors::QueryError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Polytope {
    planes: SmallVec<[DVec4; 8]>,
    /// A box holding the polytope, when its construction tells one (a box does); lets
    /// queries reject far boxes with six comparisons.
    bounds: Option<(DVec3, DVec3)>,
    /// Whether `bounds` hug the polytope: at most four times its volume (see
    /// `box_planes`). Then a box the bounds meet almost always meets the polytope too, and
    /// queries need not test their planes on it (a leaf's triangles are still tested).
    tight_bounds: bool,
    /// The box the planes bound, when they are a box's (made by
    /// [`from_oriented_box`](Self::from_oriented_box) or found among given planes): lets
    /// queries reject triangles beside it along their own normals.
    oriented_box: Option<OrientedBox>,
    /// Whether every plane's normal is of unit length up to rounding (a box's, whose
    /// normals are the columns of a rotation matrix, or a box's given as unit-normal
    /// planes): queries need not normalize them.
    unit_normals: bool,
}

/// Polytopes are equal when their planes are (the bounds are derived from them).
impl PartialEq for Polytope {
    fn eq(&self, other: &Self) -> bool {
        self.planes == other.planes
    }
}

impl Polytope {
    /// A polytope from its planes: at least one, at most [`MAX_PLANES`], all finite, no
    /// zero normal. Planes need not be normalized.
    pub fn new(planes: impl IntoIterator<Item = DVec4>) -> Result<Self, QueryError> {
        let planes: SmallVec<[DVec4; 8]> = planes.into_iter().collect();
        check_planes(&planes)?;
        // Six planes may be a box (a vehicle's, given as planes): then it has bounds.
        let found = box_of_planes(&planes);
        Ok(Polytope::with_box(planes, found))
    }

    /// Makes this polytope the one [`new`](Self::new) makes of `planes`, in place (a
    /// query's planes replaced every frame are not made into a polytope aside and moved
    /// here); on an error it is left as it was.
    ///
    /// ```
    /// use scene_intersect::intersectors::Polytope;
    /// use glam::{DVec3, DVec4};
    /// let mut p = Polytope::from_box(DVec3::ZERO, DVec3::ONE)?;
    /// // The slab 2 <= x <= 3, as two planes.
    /// p.set_planes(&[DVec4::new(1.0, 0.0, 0.0, -2.0), DVec4::new(-1.0, 0.0, 0.0, 3.0)])?;
    /// assert!(p.contains(DVec3::new(2.5, 100.0, -7.0)));
    /// assert_eq!(p.bounds(), None, "a slab is no box");
    /// assert!(p.set_planes(&[DVec4::new(0.0, 0.0, 0.0, 1.0)]).is_err());
    /// assert_eq!(p.planes().len(), 2, "unchanged by the error");
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    #[inline]
    pub fn set_planes(&mut self, planes: &[DVec4]) -> Result<(), QueryError> {
        check_planes(planes)?;
        let found = box_of_planes(planes);
        self.replace(planes, found);
        Ok(())
    }

    /// A polytope of `planes` and what `found` tells of the box they bound.
    #[inline(always)]
    fn with_box(planes: SmallVec<[DVec4; 8]>, found: Option<PlaneBox>) -> Polytope {
        Polytope {
            planes,
            bounds: found.map(|b| (b.bounds.min, b.bounds.max)),
            tight_bounds: found.is_some_and(|b| b.bounds.tight),
            oriented_box: found.map(|b| b.shape),
            unit_normals: found.is_some_and(|b| b.unit_normals),
        }
    }

    /// [`with_box`](Self::with_box), written over this polytope.
    #[inline(always)]
    fn replace(&mut self, planes: &[DVec4], found: Option<PlaneBox>) {
        if planes.len() <= self.planes.inline_size() {
            // Made anew in the inline room and moved in: cheaper than `clear` and
            // `extend_from_slice`, whose `insert_from_slice` the compiler did not inline
            // into both setters (+45 to +65 instructions a box query).
            self.planes = SmallVec::from_slice(planes);
        } else {
            // More planes than the inline room: the room on the heap is kept.
            self.planes.clear();
            self.planes.extend_from_slice(planes);
        }
        self.bounds = found.map(|b| (b.bounds.min, b.bounds.max));
        self.tight_bounds = found.is_some_and(|b| b.bounds.tight);
        self.oriented_box = found.map(|b| b.shape);
        self.unit_normals = found.is_some_and(|b| b.unit_normals);
    }

    /// The axis-aligned box `[min, max]`, planes in the order -x, +x, -y, +y, -z, +z faces.
    pub fn from_box(min: DVec3, max: DVec3) -> Result<Self, QueryError> {
        let center = (min + max) * 0.5;
        Self::from_oriented_box(center, (max - min) * 0.5, DQuat::IDENTITY)
    }

    /// The box of half extents `half_extents` around `center`, turned by `rotation`: a
    /// vehicle's bounding box. Planes in the order left (-x), right (+x), bottom (-y),
    /// top (+y), back (-z), front (+z) of the box's own axes: the front plane is last, so
    /// it is the default reference plane and hit distances are measured inward from the
    /// front face (glTF vehicles face +Z).
    pub fn from_oriented_box(
        center: DVec3,
        half_extents: DVec3,
        rotation: DQuat,
    ) -> Result<Self, QueryError> {
        let (room, made) = oriented_box_planes(center, half_extents, rotation)?;
        // Written in place: a box always has six planes, within the inline room.
        let planes = SmallVec::from_buf_and_len(room, 6);
        Ok(Polytope::with_box(planes, Some(made)))
    }

    /// Makes this polytope the box [`from_oriented_box`](Self::from_oriented_box)
    /// makes, in place (a box a few hundred bytes long is not made aside and moved
    /// here); on an error it is left as it was.
    ///
    /// ```
    /// use scene_intersect::intersectors::Polytope;
    /// use glam::{DQuat, DVec3};
    /// let mut car = Polytope::from_box(DVec3::ZERO, DVec3::ONE)?;
    /// car.set_oriented_box(DVec3::new(5.0, 0.75, 0.0), DVec3::new(1.0, 0.75, 2.0), DQuat::IDENTITY)?;
    /// assert!(car.contains(DVec3::new(5.5, 0.5, 1.0)));
    /// assert!(car.set_oriented_box(DVec3::ZERO, DVec3::NEG_ONE, DQuat::IDENTITY).is_err());
    /// assert!(car.contains(DVec3::new(5.5, 0.5, 1.0)), "unchanged by the error");
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    #[inline]
    pub fn set_oriented_box(
        &mut self,
        center: DVec3,
        half_extents: DVec3,
        rotation: DQuat,
    ) -> Result<(), QueryError> {
        let (room, made) = oriented_box_planes(center, half_extents, rotation)?;
        self.replace(&room[..6], Some(made));
        Ok(())
    }

    /// The view frustum of `projection * view` (Gribb–Hartmann plane extraction): left,
    /// right, bottom, top, far, near — the near plane last, as reference plane.
    pub fn from_frustum(view_projection: DMat4, clip_depth: ClipDepth) -> Result<Self, QueryError> {
        let m = view_projection.transpose(); // rows of the matrix as columns
        let (r0, r1, r2, r3) = (m.x_axis, m.y_axis, m.z_axis, m.w_axis);
        let near = match clip_depth {
            ClipDepth::NegativeOneToOne => r3 + r2,
            ClipDepth::ZeroToOne => r2,
        };
        Self::new([r3 + r0, r3 - r0, r3 + r1, r3 - r1, r3 - r2, near])
    }

    /// The planes.
    pub fn planes(&self) -> &[DVec4] {
        &self.planes
    }

    /// An axis-aligned box `(min, max)` holding the polytope, when its construction gives
    /// one ([`from_oriented_box`](Self::from_oriented_box), [`from_box`](Self::from_box),
    /// or [`new`](Self::new) given the six faces of a box: three pairs of opposite
    /// planes with orthogonal normals, in any order); `None` for other polytopes, and
    /// after a transform.
    ///
    /// ```
    /// use scene_intersect::intersectors::Polytope;
    /// use glam::{DQuat, DVec3};
    /// let p = Polytope::from_oriented_box(DVec3::ZERO, DVec3::new(2.0, 1.0, 1.0), DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2))?;
    /// let (min, max) = p.bounds().unwrap();
    /// assert!((max - DVec3::new(1.0, 1.0, 2.0)).abs().max_element() < 1e-6);
    /// assert!(min.cmple(-DVec3::new(1.0, 1.0, 2.0)).all());
    /// # Ok::<(), scene_intersect::intersectors::QueryError>(())
    /// ```
    pub fn bounds(&self) -> Option<(DVec3, DVec3)> {
        self.bounds
    }

    /// Whether [`bounds`](Self::bounds) are known and hug the polytope (at most four
    /// times its volume), so that a query may take a box meeting them as meeting it.
    pub(crate) fn has_tight_bounds(&self) -> bool {
        self.bounds.is_some() && self.tight_bounds
    }

    /// The box the planes bound, when known (see the field).
    pub(crate) fn oriented_box(&self) -> Option<&OrientedBox> {
        self.oriented_box.as_ref()
    }

    /// Whether every plane's normal has unit length up to a few units of rounding, so
    /// that normalizing the planes would change them by no more than that.
    pub(crate) fn has_unit_normals(&self) -> bool {
        self.unit_normals
    }

    /// True when `p` is inside (boundary included).
    pub fn contains(&self, p: DVec3) -> bool {
        self.planes
            .iter()
            .all(|pl| pl.truncate().dot(p) + pl.w >= 0.0)
    }

    /// The polytope mapped by a point transform whose *inverse* is `inverse`: a plane `q`
    /// becomes `inverseᵀ q`. Exact for affine and projective maps alike.
    pub fn transformed_by_inverse(&self, inverse: &DMat4) -> Polytope {
        let t = inverse.transpose();
        Polytope {
            planes: self.planes.iter().map(|p| t * *p).collect(),
            bounds: None,
            tight_bounds: false,
            oriented_box: None,
            unit_normals: false,
        }
    }
}

/// Whether `planes` may make a polytope: at least one, at most [`MAX_PLANES`], all
/// finite, no normal of zero length or of a length past the largest numbers.
#[inline]
fn check_planes(planes: &[DVec4]) -> Result<(), QueryError> {
    if planes.is_empty() {
        return Err(QueryError::NoPlanes);
    }
    if planes.len() > MAX_PLANES {
        return Err(QueryError::TooManyPlanes(planes.len()));
    }
    // Most planes pass, and a normal's squared length strictly between 0 and infinity
    // says its three numbers are finite (a NaN fails both comparisons): the fourth is
    // the only other check. Planes that fail are looked at again for the error.
    let usable = |p: &DVec4| {
        let length_squared = p.truncate().length_squared();
        (length_squared > 0.0) & (length_squared < f64::INFINITY) & p.w.is_finite()
    };
    if planes.iter().all(usable) {
        return Ok(());
    }
    for (i, p) in planes.iter().enumerate() {
        if !p.is_finite() {
            return Err(QueryError::NonFinite("polytope plane"));
        }
        // The length, not the vector: a subnormal normal's length underflows to 0
        // and a huge one's overflows, and every later use normalizes by it. (The
        // squared length tells both, as the length is its square root: no square
        // root is taken here.)
        let length_squared = p.truncate().length_squared();
        if length_squared == 0.0 {
            return Err(QueryError::ZeroNormal(i));
        }
        if !length_squared.is_finite() {
            return Err(QueryError::NonFinite("polytope plane normal length"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::XorShift;

    /// Everything a polytope holds, for comparing (`==` compares the planes only).
    fn parts(p: &Polytope) -> impl PartialEq + std::fmt::Debug + '_ {
        (
            p.planes(),
            p.bounds(),
            p.has_tight_bounds(),
            p.oriented_box().copied(),
            p.has_unit_normals(),
        )
    }

    /// A plane of a polytope that is no box: with `0..12` of them, more planes than
    /// the inline room.
    fn slab(k: usize) -> DVec4 {
        DVec4::new((k as f64).cos(), 0.3, (k as f64).sin(), 2.0)
    }

    /// A box's centre, half extents and turn, at random.
    fn random_box(rng: &mut XorShift) -> (DVec3, DVec3, DQuat) {
        let mut v = |scale: f64| DVec3::new(rng.next(), rng.next(), rng.next()) * scale;
        let (center, half) = (v(100.0) - 50.0, v(3.0));
        let turn = DQuat::from_xyzw(rng.next(), rng.next(), rng.next(), rng.next() + 0.1);
        (center, half, turn)
    }

    #[test]
    fn a_box_set_in_place_is_the_box_made_anew() {
        let mut rng = XorShift::new(0x0b0c5);
        let mut reused = Polytope::new((0..12).map(slab)).unwrap();
        for _ in 0..100 {
            let (center, half, turn) = random_box(&mut rng);
            let made = Polytope::from_oriented_box(center, half, turn).unwrap();
            reused.set_oriented_box(center, half, turn).unwrap();
            assert_eq!(parts(&reused), parts(&made));
        }
        // Refused, as `from_oriented_box` refuses it; the polytope is left as it was.
        let before = reused.clone();
        let bad = reused.set_oriented_box(DVec3::ZERO, DVec3::new(1.0, -1.0, 1.0), DQuat::IDENTITY);
        assert_eq!(bad, Err(QueryError::BadBox));
        assert_eq!(parts(&reused), parts(&before));
    }

    #[test]
    fn planes_set_in_place_are_the_polytope_made_anew() {
        let mut rng = XorShift::new(0x91a4e5);
        // From more planes than the inline room to a box and back (bounds, shape and
        // unit normals found or forgotten as `new` finds them).
        let mut reused = Polytope::new((0..12).map(slab)).unwrap();
        for round in 0..100 {
            let (center, half, turn) = random_box(&mut rng);
            let planes: Vec<DVec4> = match round % 3 {
                0 => Polytope::from_oriented_box(center, half, turn)
                    .unwrap()
                    .planes()
                    .to_vec(),
                // The same box's planes scaled (no unit normals) and in another order.
                1 => {
                    let b = Polytope::from_oriented_box(center, half, turn).unwrap();
                    [5, 2, 0, 3, 1, 4]
                        .map(|k| b.planes()[k] * (1.0 + k as f64))
                        .to_vec()
                }
                _ => (0..1 + round % 13).map(slab).collect(),
            };
            let made = Polytope::new(planes.iter().copied()).unwrap();
            reused.set_planes(&planes).unwrap();
            assert_eq!(parts(&reused), parts(&made), "round {round}");
            assert_eq!(made.bounds().is_some(), round % 3 != 2);
        }
        // Refused as `new` refuses them; the polytope is left as it was.
        let before = reused.clone();
        let refused: [&[DVec4]; 4] = [
            &[],
            &[DVec4::X, DVec4::new(0.0, 0.0, 0.0, 1.0)],
            &[DVec4::new(f64::NAN, 0.0, 0.0, 0.0)],
            &[DVec4::new(1e200, 1e200, 0.0, 0.0)],
        ];
        for planes in refused {
            let made = Polytope::new(planes.iter().copied());
            assert!(made.is_err());
            assert_eq!(reused.set_planes(planes), made.map(|_| ()));
            assert_eq!(parts(&reused), parts(&before));
        }
        assert_eq!(
            reused.set_planes(&[DVec4::X; MAX_PLANES + 1]),
            Err(QueryError::TooManyPlanes(MAX_PLANES + 1))
        );
    }

    #[test]
    fn construction_errors() {
        assert_eq!(Polytope::new([]), Err(QueryError::NoPlanes));
        assert_eq!(
            Polytope::new([
                DVec4::new(1.0, 0.0, 0.0, 0.0),
                DVec4::new(0.0, 0.0, 0.0, 1.0)
            ]),
            Err(QueryError::ZeroNormal(1))
        );
        assert!(Polytope::new([DVec4::new(f64::NAN, 0.0, 0.0, 0.0)]).is_err());
        assert_eq!(
            Polytope::new(vec![DVec4::X; 65]),
            Err(QueryError::TooManyPlanes(65))
        );
        assert!(Polytope::from_oriented_box(
            DVec3::ZERO,
            DVec3::new(-1.0, 1.0, 1.0),
            DQuat::IDENTITY
        )
        .is_err());
    }

    #[test]
    fn boxes_with_unusable_rotations_or_centres_are_refused() {
        let q = DQuat::from_xyzw(1e200, 1e200, 0.0, 0.0); // length overflows
        assert!(Polytope::from_oriented_box(DVec3::ZERO, DVec3::ONE, q).is_err());
        let far = DVec3::splat(f64::MAX);
        assert!(Polytope::from_oriented_box(far, DVec3::splat(f64::MAX), DQuat::IDENTITY).is_err());
        // Its squared length underflows below the normal range: no usable direction.
        let tiny = DQuat::from_xyzw(1e-170, 0.0, 0.0, 1e-170);
        assert!(Polytope::from_oriented_box(DVec3::ZERO, DVec3::ONE, tiny).is_err());
        // Small but well inside the range: normalized like any other.
        let small = DQuat::from_xyzw(1e-100, 0.0, 0.0, 1e-100);
        assert!(Polytope::from_oriented_box(DVec3::ZERO, DVec3::ONE, small).is_ok());
    }

    #[test]
    fn bounds_hug_vehicle_boxes_but_not_beams_across_the_axes() {
        let turn = |yaw: f64| DQuat::from_rotation_y(yaw);
        let car = |q| Polytope::from_oriented_box(DVec3::ONE, DVec3::new(1.0, 0.75, 2.0), q);
        // Bounds volume / box volume: 1 unturned; at 45° the 2 x 4 footprint's bounds are
        // (3/√2 + 3/√2)² / 8 = 18 / 8 = 2.25 of it (the height does not change).
        assert!(car(DQuat::IDENTITY).unwrap().has_tight_bounds());
        assert!(car(turn(std::f64::consts::FRAC_PI_4))
            .unwrap()
            .has_tight_bounds());
        // A 20 x 1 x 1 beam at 45° in the ground plane: bounds of (21/√2)² x 1 against
        // 20 x 1 x 1, 11 times its volume.
        let beam = Polytope::from_oriented_box(
            DVec3::ZERO,
            DVec3::new(10.0, 0.5, 0.5),
            turn(std::f64::consts::FRAC_PI_4),
        )
        .unwrap();
        assert!(!beam.has_tight_bounds());
        // The same boxes given as planes are found, bounds and all.
        let planes = car(turn(0.3)).unwrap().planes().to_vec();
        assert!(Polytope::new(planes).unwrap().has_tight_bounds());
        assert!(!Polytope::new(beam.planes().to_vec())
            .unwrap()
            .has_tight_bounds());
        // Without bounds, nothing hugs: a frustum.
        let frustum = Polytope::from_frustum(
            glam::dcamera::rh::proj::opengl::perspective(1.0, 1.5, 0.1, 100.0),
            ClipDepth::NegativeOneToOne,
        )
        .unwrap();
        assert!(frustum.bounds().is_none() && !frustum.has_tight_bounds());
        let moved = car(DQuat::IDENTITY)
            .unwrap()
            .transformed_by_inverse(&DMat4::IDENTITY);
        assert!(!moved.has_tight_bounds());
    }

    #[test]
    fn box_normals_are_unit_to_rounding_and_other_polytopes_are_not_assumed_so() {
        // Rotations from quaternions of every size and direction (normalized inside):
        // the matrix columns' lengths stay within a few units of 2^-53 of 1.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for k in 0..2000 {
            let scale = [1.0, 1e-90, 1e90, 3.7][k % 4];
            let q = DQuat::from_xyzw(next(), next(), next(), next()) * scale;
            let Ok(p) = Polytope::from_oriented_box(DVec3::splat(next()), DVec3::ONE, q) else {
                continue;
            };
            assert!(p.has_unit_normals());
            // Its planes given as they are: the same box, found with its unit normals.
            let given = Polytope::new(p.planes().iter().copied()).unwrap();
            assert!(given.bounds().is_some() && given.has_unit_normals(), "{q}");
            for plane in p.planes() {
                let error = (plane.truncate().length() - 1.0).abs();
                assert!(error <= 8.0 * f64::EPSILON, "{q}: |n| - 1 = {error:e}");
            }
        }
        let planes = vec![DVec4::new(0.0, 2.0, 0.0, 1.0); 4];
        assert!(!Polytope::new(planes).unwrap().has_unit_normals());
        let turned = Polytope::from_box(DVec3::ZERO, DVec3::ONE)
            .unwrap()
            .transformed_by_inverse(&DMat4::from_scale(DVec3::splat(0.5)));
        assert!(!turned.has_unit_normals());
    }

    #[test]
    fn a_box_s_bounds_hold_its_corners() {
        // Half extents (3, 1, 2) turned 30 degrees about y: corners at c + R(±3, ±1, ±2).
        let (c, half) = (DVec3::new(-4.0, 2.0, 7.0), DVec3::new(3.0, 1.0, 2.0));
        let r = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_6);
        let p = Polytope::from_oriented_box(c, half, r).unwrap();
        let (min, max) = p.bounds().unwrap();
        // Extent along x: 3 cos 30 + 2 sin 30 = 3.598..., along z: 3 sin 30 + 2 cos 30.
        let (s, co) = (0.5, 3f64.sqrt() / 2.0);
        let extent = DVec3::new(3.0 * co + 2.0 * s, 1.0, 3.0 * s + 2.0 * co);
        assert!((max - (c + extent)).abs().max_element() < 1e-6);
        assert!((min - (c - extent)).abs().max_element() < 1e-6);
        for k in 0..8 {
            let sign = DVec3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { -1.0 } else { 1.0 },
            );
            let corner = c + r * (sign * half);
            assert!(corner.cmpge(min).all() && corner.cmple(max).all());
        }
        // The same box given as planes: found again, with bounds that hold the corners
        // too; equality looks at the planes alone.
        let from_planes = Polytope::new(p.planes().iter().copied()).unwrap();
        let (min, max) = from_planes.bounds().expect("six box faces make a box");
        assert!((max - (c + extent)).abs().max_element() < 1e-6);
        assert!((min - (c - extent)).abs().max_element() < 1e-6);
        assert_eq!(from_planes, p);
    }

    #[test]
    fn rotated_box_contains_its_corners_only() {
        // Half extents (2, 1, 1) turned 90 degrees about y: the long axis runs along z.
        let p = Polytope::from_oriented_box(
            DVec3::new(5.0, 0.0, 0.0),
            DVec3::new(2.0, 1.0, 1.0),
            DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
        )
        .unwrap();
        assert!(p.contains(DVec3::new(5.0, 0.0, 1.9)));
        assert!(!p.contains(DVec3::new(6.5, 0.0, 0.0)));
        assert!(p.contains(DVec3::new(5.99, 0.99, -1.99)));
    }

    #[test]
    fn frustum_contains_points_in_view() {
        let view = glam::dcamera::rh::view::look_at_mat4(
            DVec3::new(0.0, 0.0, 10.0),
            DVec3::ZERO,
            DVec3::Y,
        );
        let proj = glam::dcamera::rh::proj::opengl::perspective(1.0, 1.0, 1.0, 100.0);
        let f = Polytope::from_frustum(proj * view, ClipDepth::NegativeOneToOne).unwrap();
        assert!(f.contains(DVec3::ZERO));
        assert!(
            !f.contains(DVec3::new(0.0, 0.0, 9.5)),
            "before the near plane"
        );
        assert!(
            !f.contains(DVec3::new(0.0, 0.0, -95.0)),
            "past the far plane"
        );
        assert!(!f.contains(DVec3::new(50.0, 0.0, 0.0)), "off to the side");
        let proj = glam::dcamera::rh::proj::directx::perspective(1.0, 1.0, 1.0, 100.0);
        let f = Polytope::from_frustum(proj * view, ClipDepth::ZeroToOne).unwrap();
        assert!(f.contains(DVec3::ZERO));
        assert!(!f.contains(DVec3::new(0.0, 0.0, 9.5)));
    }
}
