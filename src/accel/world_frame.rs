//! [`WorldFrame`]: where a [`WorldBvh`](super::WorldBvh)'s `f32` coordinates are
//! measured from, and what a query adds to its margins there.
//!
//! The world tree's boxes and quantized corners are `f32`, and every conservative test
//! on them (slabs, balls, planes) pads by a share of the coordinates' magnitude. A
//! georeferenced scene (a city placed by a root transform some `4·10^6` units from the
//! world origin) would have `f32` coordinates good to half a unit only, and pads of many
//! units: on littlest_tokyo moved there, a batch of mixed queries took 18 times as long.
//! A scene far from the origin is therefore stored relative to the centre of its box:
//! the `f32` coordinates, and the margins, are then those of the scene's own size.
//!
//! The exact tests still run on the drawables' own vertices in `f64`, in absolute
//! coordinates, and their rounding grows with those (and, for tests run in an
//! instance's frame, with its transform's condition number, at most `10^6` for the
//! triangles the world tree holds, whose computed inverses also move points into the
//! frame and back within `2^-32` of their coordinates: see
//! [`SceneIndex`](super::SceneIndex)). The relative margins no longer cover it, so
//! [`WorldFrame::pad`] adds `2^-28` of the origin's distance, a thousand times that
//! rounding and still a hundredth of a unit at `4·10^6`.
//!
//! A frame may also be turned and scaled against the world (a *similarity*): when a
//! move of the whole scene turns or scales every instance the tree holds alike (a model
//! turned in a viewer, a scene scaled from centimetres to metres), the tree's records
//! stay as they were and its frame turns with them
//! ([`SceneIndex::refit_under`](super::SceneIndex::refit_under)). Queries are then
//! moved into the tree's coordinates: points and directions by the frame's inverse,
//! lengths by its scale, planes by its transpose. A scene built turned as a whole (a
//! model placed at a heading) is measured along its own axes from the start
//! ([`WorldFrame::along`]), where its boxes hug it as they would unturned.

use std::cmp::Ordering;

use glam::{DAffine3, DMat3, DMat4, DVec3, DVec4};

use super::Aabb;

/// What [`WorldFrame::pad`] allows per unit of the origin's distance: the exact `f64`
/// tests' rounding of absolute coordinates, some `2^-53` of them times a condition
/// number up to `10^6` (about `2^-33`), with room to spare.
const ABSOLUTE_ROUNDING: f64 = 1.0 / (1u64 << 28) as f64;

/// The coordinate frame of a world tree: its `f32` coordinates are world coordinates
/// minus [`origin`](Self::origin) (then turned and scaled back, for a frame
/// [carried](Self::carried_by) by a turn or a scale of the whole scene).
///
/// ```
/// use glam::{DVec3, DVec4};
/// use scene_intersect::accel::WorldFrame;
///
/// let frame = WorldFrame::around(DVec3::new(4.0e6, 0.0, 0.0));
/// assert_eq!(frame.point(DVec3::new(4.0e6 + 1.5, 2.0, 0.0)), DVec3::new(1.5, 2.0, 0.0));
/// // The plane x = 4·10^6 + 1 (inward normal -x) is x' = 1 in the tree's frame.
/// let plane = frame.plane(DVec4::new(-1.0, 0.0, 0.0, 4.0e6 + 1.0));
/// assert_eq!(plane, DVec4::new(-1.0, 0.0, 0.0, 1.0));
/// assert!(frame.pad() > 0.0 && frame.pad() < 0.02);
/// assert_eq!(WorldFrame::default().pad(), 0.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorldFrame {
    origin: DVec3,
    /// When the tree turned or scaled with the scene: its axes and unit in the world.
    similarity: Option<Similarity>,
    /// [`offset`](Self::offset), kept: every query's padding reads it, and a division
    /// there sat at the head of the walks' set-up.
    offset: f64,
}

/// How a turned or scaled [`WorldFrame`] lies in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Similarity {
    /// The tree's coordinates from world coordinates (the inverse of the frame's map
    /// into the world, a turn and a uniform scale after the origin's translation).
    to_tree: DAffine3,
    /// The frame's map into the world's linear part: a turn (or a mirror) times
    /// `scale`.
    to_world: DMat3,
    /// The world length of a unit of the tree.
    scale: f64,
}

/// How far a linear map's columns may be from a turn times one common scale, relative
/// to that scale's square, for [`WorldFrame::carried_by`] to take it for a similarity:
/// `2^-40`, some thousands of units of `f64` rounding, and `2^-16` of the `f32`
/// rounding the tree's margins allow for.
const SIMILARITY_SLACK: f64 = 1.0 / (1u64 << 40) as f64;

/// How close to a world axis each axis of a frame must lie for [`WorldFrame::along`] to
/// keep the world's axes: its largest coordinate at least `1 − 10^-12` of its length,
/// within some `1.4·10^-6` radians.
const AXIS_SLACK: f64 = 1e-12;

/// The scale of `linear` when it is a turn (or mirror) times a uniform scale, its
/// columns at right angles and of one length to [`SIMILARITY_SLACK`] of their
/// squares; `None` otherwise (or when anything is not finite).
fn similarity_scale(linear: &DMat3) -> Option<f64> {
    let columns = [linear.x_axis, linear.y_axis, linear.z_axis];
    let square = columns.iter().map(|c| c.length_squared()).sum::<f64>() / 3.0;
    let slack = SIMILARITY_SLACK * square;
    for i in 0..3 {
        for j in i..3 {
            let expected = if i == j { square } else { 0.0 };
            let gap = (columns[i].dot(columns[j]) - expected).abs();
            // (A NaN, in the gap or the slack, refuses.)
            if !matches!(
                gap.partial_cmp(&slack),
                Some(Ordering::Less | Ordering::Equal)
            ) {
                return None;
            }
        }
    }
    Some(square.sqrt())
}

/// The box holding the box `[min, max]` moved by `map`: around the moved centre, the
/// half diagonal through the map's magnitudes, grown by [`LENGTH_SLACK`] of the
/// coordinates for the map's rounding and by `pad`.
fn mapped_box(map: &DAffine3, min: DVec3, max: DVec3, pad: f64) -> (DVec3, DVec3) {
    let centre = map.transform_point3((min + max) * 0.5);
    let m = map.matrix3;
    let abs = DMat3::from_cols(m.x_axis.abs(), m.y_axis.abs(), m.z_axis.abs());
    let half = abs * ((max - min) * 0.5);
    let pad = (centre.abs() + half).max_element() * LENGTH_SLACK + pad;
    let half = half + DVec3::splat(pad);
    (centre - half, centre + half)
}

/// What a turned frame's [`WorldFrame::length`] adds, relative to the length, for the
/// frame's departure from an exact similarity (at most [`SIMILARITY_SLACK`]) and the
/// rounding of the maps.
const LENGTH_SLACK: f64 = 1.0 / (1u64 << 36) as f64;

impl WorldFrame {
    /// The frame whose coordinates are measured from `origin` (finite).
    pub fn around(origin: DVec3) -> WorldFrame {
        WorldFrame {
            origin,
            similarity: None,
            offset: origin.abs().max_element(),
        }
    }

    /// This frame carried by `motion`, a map of the world onto itself that turns (or
    /// mirrors) and scales uniformly, to the rounding of `f64` (its columns at right
    /// angles and of one length to `2^-40` of their squares): the frame in which the
    /// tree's records, made for the world before `motion`, hold the world after it. `None` when `motion` is no such
    /// map (an uneven scale, a shear, a singular or non-finite map), whose balls would
    /// not stay balls in the tree.
    ///
    /// ```
    /// use glam::{DAffine3, DQuat, DVec3};
    /// use scene_intersect::accel::WorldFrame;
    ///
    /// // The world turned a quarter about y and doubled, about the point (10, 0, 0).
    /// let turn = DAffine3::from_translation(DVec3::new(10.0, 0.0, 0.0))
    ///     * DAffine3::from_scale_rotation_translation(
    ///         DVec3::splat(2.0),
    ///         DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
    ///         DVec3::ZERO,
    ///     )
    ///     * DAffine3::from_translation(DVec3::new(-10.0, 0.0, 0.0));
    /// let frame = WorldFrame::default().carried_by(&turn).unwrap();
    /// // The world point the turn took (11, 0, 0) to is (11, 0, 0) in the tree.
    /// let moved = turn.transform_point3(DVec3::new(11.0, 0.0, 0.0));
    /// assert!((frame.point(moved) - DVec3::new(11.0, 0.0, 0.0)).length() < 1e-12);
    /// // Two world units are one of the tree's.
    /// assert!((frame.length(2.0) - 1.0).abs() < 1e-9);
    /// // An uneven scale is no similarity.
    /// let squash = DAffine3::from_scale(DVec3::new(1.0, 0.5, 1.0));
    /// assert!(WorldFrame::default().carried_by(&squash).is_none());
    /// ```
    pub fn carried_by(&self, motion: &DAffine3) -> Option<WorldFrame> {
        let scale = similarity_scale(&motion.matrix3)?;
        let (to_world, scale) = match &self.similarity {
            Some(s) => (motion.matrix3 * s.to_world, scale * s.scale),
            None => (motion.matrix3, scale),
        };
        WorldFrame::similar(motion.transform_point3(self.origin), to_world, scale)
    }

    /// The frame with this origin whose unit vectors are the columns of `to_world`, a
    /// turn (or mirror) times `scale`; `None` when anything is not finite or the scale
    /// not positive.
    fn similar(origin: DVec3, to_world: DMat3, scale: f64) -> Option<WorldFrame> {
        let to_tree = DAffine3::from_mat3_translation(to_world, origin).inverse();
        let usable = scale > 0.0
            && scale.is_finite()
            && origin.is_finite()
            && to_world.is_finite()
            && to_tree.is_finite();
        usable.then_some(WorldFrame {
            origin,
            similarity: Some(Similarity {
                to_tree,
                to_world,
                scale,
            }),
            offset: origin.abs().max_element() / scale,
        })
    }

    /// This frame turned and scaled to the axes and unit of `local_to_world` (a frame's
    /// local-to-world matrix, affine), about its origin, when that matrix's linear part
    /// is a similarity (see [`carried_by`](Self::carried_by)) that turns the axes off
    /// the world's (an axis more than some `1.4·10^-6` radians from every world axis);
    /// `None` otherwise (a turn by quarter turns, a mirror or a scale alone leave
    /// boxes along the world's axes as good as along its own).
    ///
    /// ```
    /// use glam::{DMat4, DVec3};
    /// use scene_intersect::accel::WorldFrame;
    ///
    /// let heading = DMat4::from_rotation_y(0.3) * DMat4::from_scale(DVec3::splat(2.0));
    /// let frame = WorldFrame::default().along(&heading).unwrap();
    /// // One unit along the model's own x axis is one unit along the tree's.
    /// let x = frame.point(heading.transform_point3(DVec3::X));
    /// assert!((x - DVec3::X).length() < 1e-12);
    /// // A quarter turn keeps the world's axes.
    /// let quarter = DMat4::from_rotation_y(std::f64::consts::FRAC_PI_2);
    /// assert!(WorldFrame::default().along(&quarter).is_none());
    /// ```
    pub fn along(&self, local_to_world: &DMat4) -> Option<WorldFrame> {
        let linear = DAffine3::from_mat4(*local_to_world).matrix3;
        let columns = [linear.x_axis, linear.y_axis, linear.z_axis];
        let aligned = columns
            .iter()
            .all(|c| c.abs().max_element() >= c.length() * (1.0 - AXIS_SLACK));
        if aligned || self.similarity.is_some() {
            return None;
        }
        WorldFrame::similar(self.origin, linear, similarity_scale(&linear)?)
    }

    /// The frame for a scene whose world box is `bounds`: the world's own (origin zero)
    /// when the box reaches within its own size of the world origin, else the one
    /// around the box's centre.
    pub fn for_bounds(bounds: &Aabb) -> WorldFrame {
        let (min, max) = bounds.as_dvec3();
        let (centre, size) = ((min + max) * 0.5, (max - min).max_element());
        let far = centre.abs().max_element() > size;
        if min.cmple(max).all() && centre.is_finite() && size.is_finite() && far {
            WorldFrame::around(centre)
        } else {
            WorldFrame::default()
        }
    }

    /// The world point the tree's coordinates are measured from.
    pub fn origin(&self) -> DVec3 {
        self.origin
    }

    /// Whether this is the world's own frame (its origin, its axes and unit): then the
    /// tree's coordinates are world coordinates.
    pub fn is_world(&self) -> bool {
        self.origin == DVec3::ZERO && self.similarity.is_none()
    }

    /// Whether the frame is turned or scaled against the world (see
    /// [`carried_by`](Self::carried_by)), rather than only moved.
    pub fn is_turned(&self) -> bool {
        self.similarity.is_some()
    }

    /// The world length of one of the tree's units (1 but for a frame scaled with the
    /// scene).
    pub fn unit(&self) -> f64 {
        self.similarity.as_ref().map_or(1.0, |s| s.scale)
    }

    /// The largest magnitude of the origin's coordinates, in the tree's units.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// A world point in the tree's coordinates.
    #[inline]
    pub fn point(&self, world: DVec3) -> DVec3 {
        match &self.similarity {
            Some(s) => s.to_tree.transform_point3(world),
            None => world - self.origin,
        }
    }

    /// A world vector (a segment's direction, a box's half edge) in the tree's
    /// coordinates.
    #[inline]
    pub fn vector(&self, world: DVec3) -> DVec3 {
        match &self.similarity {
            Some(s) => s.to_tree.transform_vector3(world),
            None => world,
        }
    }

    /// A world length (a radius, a tolerance, a pad) in the tree's units, rounded up
    /// for a turned frame's departure from an exact similarity.
    #[inline]
    pub fn length(&self, world: f64) -> f64 {
        match &self.similarity {
            Some(s) => world / s.scale * (1.0 + LENGTH_SLACK),
            None => world,
        }
    }

    /// The box holding the world box `[min, max]` in the tree's coordinates (its own
    /// corners moved for a frame that is not turned; for a turned one, the box around
    /// the moved centre and half diagonal, grown for the rounding of the map).
    pub fn bounds(&self, min: DVec3, max: DVec3) -> (DVec3, DVec3) {
        let Some(s) = &self.similarity else {
            return (self.point(min), self.point(max));
        };
        mapped_box(&s.to_tree, min, max, 0.0)
    }

    /// The box holding, in the tree's coordinates, the box `[min, max]` of a frame
    /// whose local-to-world matrix is `local_to_world` (affine): the box around the
    /// local box's centre and half diagonal moved straight into the tree, grown for
    /// the rounding of the maps.
    pub fn placed_bounds(&self, min: DVec3, max: DVec3, local_to_world: &DMat4) -> (DVec3, DVec3) {
        let to_tree = match &self.similarity {
            Some(s) => s.to_tree,
            None => DAffine3::from_translation(-self.origin),
        };
        let map = to_tree * DAffine3::from_mat4(*local_to_world);
        mapped_box(&map, min, max, self.pad())
    }

    /// The box holding the world `points` in the tree's coordinates: the box of the
    /// points moved there, grown for a turned frame's rounding of the map.
    pub fn points_bounds(&self, points: &[DVec3]) -> (DVec3, DVec3) {
        let moved = points.iter().map(|&p| self.point(p));
        let (min, max) = moved.fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(min, max), p| (min.min(p), max.max(p)),
        );
        if self.similarity.is_none() {
            return (min, max);
        }
        let pad = DVec3::splat(min.abs().max(max.abs()).max_element() * LENGTH_SLACK + self.pad());
        (min - pad, max + pad)
    }

    /// A world plane `(n, d)` (points `x` with `n · x + d ≥ 0` inside) in the tree's
    /// coordinates: for a frame that is not turned the same normal, the offset moved;
    /// for a turned one the normal turned with the frame and the plane scaled back to
    /// a normal as long as the world's.
    #[inline]
    pub fn plane(&self, world: DVec4) -> DVec4 {
        let normal = world.truncate();
        let moved = normal.extend(world.w + normal.dot(self.origin));
        match &self.similarity {
            Some(s) => {
                let turned = s.to_world.transpose() * normal;
                turned.extend(moved.w) * (normal.length() / turned.length())
            }
            None => moved,
        }
    }

    /// What a query adds to its padding for the exact tests' rounding of absolute
    /// coordinates, which the tree's relative magnitudes no longer bound (zero for the
    /// world's own frame), in the tree's units.
    pub fn pad(&self) -> f64 {
        self.offset() * ABSOLUTE_ROUNDING
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::XorShift;
    use glam::{DQuat, Vec3};

    fn bounds(min: Vec3, max: Vec3) -> Aabb {
        Aabb { min, max }
    }

    #[test]
    fn scenes_near_the_origin_keep_the_world_frame() {
        // Around the origin, or beside it by less than the scene's size.
        let near = [
            bounds(Vec3::splat(-10.0), Vec3::splat(10.0)),
            bounds(Vec3::ZERO, Vec3::splat(1000.0)),
            bounds(Vec3::new(500.0, 0.0, 0.0), Vec3::new(1500.0, 10.0, 10.0)),
        ];
        for b in near {
            assert_eq!(WorldFrame::for_bounds(&b), WorldFrame::default(), "{b:?}");
        }
        // Empty and unbounded boxes too.
        assert_eq!(WorldFrame::for_bounds(&Aabb::EMPTY), WorldFrame::default());
        let unbounded = bounds(Vec3::splat(f32::NEG_INFINITY), Vec3::splat(f32::INFINITY));
        assert_eq!(WorldFrame::for_bounds(&unbounded), WorldFrame::default());
    }

    #[test]
    fn far_scenes_are_measured_from_their_centre() {
        // A 200 × 50 × 100 block placed at (4·10^6, 0, 5·10^6): centre (4e6+100, 25, 5e6+50).
        let b = bounds(
            Vec3::new(4.0e6, 0.0, 5.0e6),
            Vec3::new(4.0e6 + 200.0, 50.0, 5.0e6 + 100.0),
        );
        let frame = WorldFrame::for_bounds(&b);
        assert_eq!(
            frame.origin(),
            DVec3::new(4.0e6 + 100.0, 25.0, 5.0e6 + 50.0)
        );
        assert_eq!(frame.offset(), 5.0e6 + 50.0);
        // 2^-28 of 5 000 050.
        assert_eq!(frame.pad(), (5.0e6 + 50.0) / 268_435_456.0);
    }

    #[test]
    fn planes_keep_their_points_inside() {
        let frame = WorldFrame::around(DVec3::new(3.0e6, -2.0e5, 7.0));
        let world = DVec4::new(0.6, 0.0, -0.8, 12.5);
        let moved = frame.plane(world);
        for p in [
            DVec3::new(3.0e6, -2.0e5, 7.0),
            DVec3::new(3.0e6 + 40.0, -2.0e5, 9.0),
        ] {
            let before = world.truncate().dot(p) + world.w;
            let after = moved.truncate().dot(frame.point(p)) + moved.w;
            assert!((before - after).abs() < 1e-9, "{before} vs {after}");
        }
    }

    #[test]
    fn a_scaled_and_moved_frame_measures_points_planes_and_lengths_in_its_units() {
        // The world doubled, then moved 4·10^6 along x: the tree's unit is two world
        // units, its origin at (4·10^6, 0, 0).
        let motion = DAffine3::from_translation(DVec3::new(4.0e6, 0.0, 0.0))
            * DAffine3::from_scale(DVec3::splat(2.0));
        let frame = WorldFrame::default().carried_by(&motion).unwrap();
        assert!(frame.is_turned() && !frame.is_world());
        assert_eq!(frame.origin(), DVec3::new(4.0e6, 0.0, 0.0));
        assert_eq!(frame.unit(), 2.0);
        assert_eq!(frame.offset(), 2.0e6);
        assert_eq!(frame.pad(), 2.0e6 / 268_435_456.0);
        assert_eq!(
            frame.point(DVec3::new(4.0e6 + 2.0, 6.0, -1.0)),
            DVec3::new(1.0, 3.0, -0.5)
        );
        assert_eq!(
            frame.vector(DVec3::new(2.0, 0.0, -4.0)),
            DVec3::new(1.0, 0.0, -2.0)
        );
        assert!(frame.length(3.0) >= 1.5 && frame.length(3.0) < 1.5 * (1.0 + 1e-9));
        // The plane x ≤ 4·10^6 + 2 (inward normal −x) is x' ≤ 1.
        let plane = frame.plane(DVec4::new(-1.0, 0.0, 0.0, 4.0e6 + 2.0));
        assert_eq!(plane, DVec4::new(-1.0, 0.0, 0.0, 1.0));
    }

    /// A number in `[-1, 1)`.
    fn signed(rng: &mut XorShift) -> f64 {
        rng.next() * 2.0 - 1.0
    }

    fn random_vector(rng: &mut XorShift) -> DVec3 {
        DVec3::new(signed(rng), signed(rng), signed(rng))
    }

    /// A turn, a scale of a tenth to ten times (a mirror when `mirror`) and a move of up
    /// to 10^6.
    fn random_motion(rng: &mut XorShift, mirror: bool) -> DAffine3 {
        let axis = random_vector(rng).normalize_or(DVec3::Y);
        let sign = if mirror { -1.0 } else { 1.0 };
        DAffine3::from_scale_rotation_translation(
            DVec3::splat(10f64.powf(signed(rng)) * sign),
            DQuat::from_axis_angle(axis, signed(rng) * 3.0),
            random_vector(rng) * 10f64.powf(6.0 * signed(rng).abs()),
        )
    }

    #[test]
    fn a_carried_frame_holds_the_records_made_before_the_motions() {
        let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
        for case in 0..200 {
            let built = WorldFrame::around(random_vector(&mut rng) * 1e3);
            let first = random_motion(&mut rng, case % 3 == 0);
            let second = random_motion(&mut rng, case % 5 == 0);
            // Carried by both at once, or one after the other: the same frame.
            let frame = built.carried_by(&(second * first)).unwrap();
            let stepwise = built
                .carried_by(&first)
                .unwrap()
                .carried_by(&second)
                .unwrap();
            let points: Vec<DVec3> = (0..4).map(|_| random_vector(&mut rng) * 50.0).collect();
            let (lo, hi) = (DVec3::splat(-50.0), DVec3::splat(50.0));
            for &p in &points {
                let record = built.point(p);
                let now = (second * first).transform_point3(p);
                let size = 1.0 + record.abs().max_element() + frame.offset();
                for f in [&frame, &stepwise] {
                    let error = (f.point(now) - record).abs().max_element();
                    assert!(error < 1e-9 * size, "case {case}: {error}");
                }
                // A world box holding the point holds its record, moved into the frame.
                let (min, max) = frame.bounds(now - 1e-3, now + 1e-3);
                assert!(
                    record.cmpge(min).all() && record.cmple(max).all(),
                    "case {case}"
                );
                // A plane through the moved point, with its record on the inside by
                // the world distance over the unit.
                let normal = random_vector(&mut rng).normalize_or(DVec3::X);
                let world = normal.extend(-normal.dot(now) + 0.5);
                let tree = frame.plane(world);
                let inside = tree.truncate().dot(record) + tree.w;
                let expected = 0.5 / frame.unit();
                assert!((inside - expected).abs() < 1e-9 * size, "case {case}");
                assert!((tree.truncate().length() - 1.0).abs() < 1e-12);
            }
            // The records' box holds the box of the same points placed by any frame.
            let placed = DMat4::from(second * first);
            let (min, max) = frame.placed_bounds(lo, hi, &placed);
            let (rmin, rmax) = built.bounds(lo, hi);
            assert!(
                rmin.cmpge(min).all() && rmax.cmple(max).all(),
                "case {case}"
            );
            let moved: Vec<DVec3> = points.iter().map(|&p| placed.transform_point3(p)).collect();
            let (min, max) = frame.points_bounds(&moved);
            for &p in &points {
                let record = built.point(p);
                assert!(
                    record.cmpge(min).all() && record.cmple(max).all(),
                    "case {case}"
                );
            }
        }
    }

    #[test]
    fn only_similarities_carry_a_frame() {
        let frame = WorldFrame::around(DVec3::new(5.0, 0.0, 0.0));
        let turn = DQuat::from_rotation_z(0.4);
        let refused = [
            DAffine3::from_scale(DVec3::new(1.0, 1.0, 1.0 + 1e-9)),
            DAffine3::from_mat3(DMat3::from_cols(
                DVec3::X,
                DVec3::new(0.1, 1.0, 0.0),
                DVec3::Z,
            )),
            DAffine3::from_scale(DVec3::ZERO),
            DAffine3::from_scale_rotation_translation(DVec3::ONE, turn, DVec3::splat(f64::NAN)),
            DAffine3::from_scale(DVec3::splat(f64::INFINITY)),
        ];
        for motion in refused {
            assert!(frame.carried_by(&motion).is_none(), "{motion:?}");
        }
        let mirrored = DAffine3::from_scale(DVec3::new(-3.0, 3.0, 3.0));
        assert!(frame.carried_by(&mirrored).is_some());
    }
}
