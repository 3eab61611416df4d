//! [`IntersectorGroup`]: several queries answered in one traversal.

use glam::{DMat4, Vec4};

use super::line_segment::LocalSegment;
use super::polytope_intersector::LocalPolytope;
use super::sphere::LocalSphere;
use super::{LineSegmentIntersector, PolytopeIntersector, QueryError, SphereIntersector};
use crate::accel::{Aabb, Aabb4, WideEntries};
use crate::bounding::{BoundingBox, BoundingSphere};
use crate::drawable::Drawable;
use crate::visitor::{DrawableContext, FrameContext, IndexContext, Intersector};

/// Any of the built-in intersectors, as a member of an [`IntersectorGroup`].
// Members are few and long-lived; boxing them would only add an indirection per test.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum AnyIntersector {
    /// A line segment.
    LineSegment(LineSegmentIntersector),
    /// A polytope.
    Polytope(PolytopeIntersector),
    /// A sphere.
    Sphere(SphereIntersector),
}

/// A member's query in one local frame.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum AnyLocal {
    /// A line segment.
    LineSegment(LocalSegment),
    /// A polytope.
    Polytope(LocalPolytope),
    /// A sphere.
    Sphere(LocalSphere),
}

macro_rules! dispatch {
    ($self:expr, $i:ident => $e:expr) => {
        match $self {
            AnyIntersector::LineSegment($i) => $e,
            AnyIntersector::Polytope($i) => $e,
            AnyIntersector::Sphere($i) => $e,
        }
    };
}

macro_rules! dispatch_local {
    ($self:expr, $local:expr, $i:ident, $l:ident => $e:expr) => {
        match ($self, $local) {
            (AnyIntersector::LineSegment($i), AnyLocal::LineSegment($l)) => $e,
            (AnyIntersector::Polytope($i), AnyLocal::Polytope($l)) => $e,
            (AnyIntersector::Sphere($i), AnyLocal::Sphere($l)) => $e,
            _ => unreachable!("locals are made by their own member"),
        }
    };
}

/// Several intersectors answered in a single traversal (OSG's `IntersectorGroup`): a
/// node is entered when any member wants it, and each drawable is tested by the members
/// whose bounds test it passes. Each member keeps its own hits, limits and frame.
///
/// ```
/// use scene_intersect::intersectors::{AnyIntersector, IntersectorGroup, LineSegmentIntersector, SphereIntersector};
/// use glam::DVec3;
/// let mut group = IntersectorGroup::new();
/// group.push(LineSegmentIntersector::new(DVec3::ZERO, DVec3::X)?.into());
/// group.push(SphereIntersector::new(DVec3::ZERO, 1.0)?.into());
/// assert_eq!(group.members().len(), 2);
/// # Ok::<(), scene_intersect::intersectors::QueryError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct IntersectorGroup {
    members: Vec<AnyIntersector>,
}

impl From<LineSegmentIntersector> for AnyIntersector {
    fn from(i: LineSegmentIntersector) -> Self {
        AnyIntersector::LineSegment(i)
    }
}

impl From<PolytopeIntersector> for AnyIntersector {
    fn from(i: PolytopeIntersector) -> Self {
        AnyIntersector::Polytope(i)
    }
}

impl From<SphereIntersector> for AnyIntersector {
    fn from(i: SphereIntersector) -> Self {
        AnyIntersector::Sphere(i)
    }
}

impl IntersectorGroup {
    /// An empty group.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a member.
    pub fn push(&mut self, member: AnyIntersector) {
        self.members.push(member);
    }

    /// The members, with their hits after a traversal.
    pub fn members(&self) -> &[AnyIntersector] {
        &self.members
    }

    /// The members, mutable.
    pub fn members_mut(&mut self) -> &mut [AnyIntersector] {
        &mut self.members
    }

    /// Takes the members out.
    pub fn into_members(self) -> Vec<AnyIntersector> {
        self.members
    }
}

impl Intersector for AnyIntersector {
    type Local = AnyLocal;

    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError> {
        dispatch!(self, i => i.begin(frames))
    }

    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> AnyLocal {
        match self {
            AnyIntersector::LineSegment(i) => {
                AnyLocal::LineSegment(i.localize(local_to_world, world_to_local))
            }
            AnyIntersector::Polytope(i) => {
                AnyLocal::Polytope(i.localize(local_to_world, world_to_local))
            }
            AnyIntersector::Sphere(i) => {
                AnyLocal::Sphere(i.localize(local_to_world, world_to_local))
            }
        }
    }

    fn enter_node(&self, local: &AnyLocal, bound: &BoundingSphere) -> bool {
        dispatch_local!(self, local, i, l => i.enter_node(l, bound))
    }

    fn enter_drawable(&self, local: &AnyLocal, bound: &BoundingBox) -> bool {
        dispatch_local!(self, local, i, l => i.enter_drawable(l, bound))
    }

    fn begin_world_boxes(&mut self, scene_bounds: &Aabb) {
        dispatch!(self, i => i.begin_world_boxes(scene_bounds))
    }

    fn enter_world_box(&self, bound: &Aabb) -> Option<f64> {
        dispatch!(self, i => i.enter_world_box(bound))
    }

    fn enter_world_boxes(&self, boxes: &Aabb4) -> WideEntries {
        dispatch!(self, i => i.enter_world_boxes(boxes))
    }

    fn world_limit(&self) -> f64 {
        dispatch!(self, i => i.world_limit())
    }

    fn intersect(
        &mut self,
        local: &AnyLocal,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        dispatch_local!(self, local, i, l => i.intersect(l, context, drawable))
    }

    fn reached_limit(&self) -> bool {
        dispatch!(self, i => i.reached_limit())
    }

    fn drawable_test_only_culls(&self) -> bool {
        dispatch!(self, i => i.drawable_test_only_culls())
    }

    fn drawable_test_follows_from_hits(&self, local: &AnyLocal, bound: &BoundingBox) -> bool {
        dispatch_local!(self, local, i, l => i.drawable_test_follows_from_hits(l, bound))
    }

    fn hits_points_or_lines(&self) -> bool {
        dispatch!(self, i => i.hits_points_or_lines())
    }

    fn orders_world_boxes(&self) -> bool {
        dispatch!(self, i => i.orders_world_boxes())
    }

    fn intersect_index(&mut self, context: &mut IndexContext<'_>) -> bool {
        dispatch!(self, i => i.intersect_index(context))
    }

    fn end(&mut self) {
        dispatch!(self, i => i.end())
    }
}

impl AnyIntersector {
    /// Whether [`intersect_index`](Intersector::intersect_index) walks this index's
    /// world tree (a polytope whose planes do not fit the `f32` tests, when the tree's
    /// boxes need them, does not).
    fn walks_world(&self, context: &IndexContext<'_>) -> bool {
        match self {
            AnyIntersector::Polytope(p) => p.walks_world(context.index().world()),
            AnyIntersector::LineSegment(_) | AnyIntersector::Sphere(_) => true,
        }
    }
}

impl Intersector for IntersectorGroup {
    type Local = Vec<AnyLocal>;

    fn begin(&mut self, frames: &FrameContext) -> Result<(), QueryError> {
        self.members.iter_mut().try_for_each(|m| m.begin(frames))
    }

    fn localize(&self, local_to_world: &DMat4, world_to_local: &DMat4) -> Vec<AnyLocal> {
        self.members
            .iter()
            .map(|m| m.localize(local_to_world, world_to_local))
            .collect()
    }

    fn enter_node(&self, local: &Vec<AnyLocal>, bound: &BoundingSphere) -> bool {
        self.members
            .iter()
            .zip(local)
            .any(|(m, l)| !m.reached_limit() && m.enter_node(l, bound))
    }

    /// Entered when any member wants it; ordered by the nearest member key.
    fn begin_world_boxes(&mut self, scene_bounds: &Aabb) {
        self.members
            .iter_mut()
            .for_each(|m| m.begin_world_boxes(scene_bounds));
    }

    fn enter_world_box(&self, bound: &Aabb) -> Option<f64> {
        self.members
            .iter()
            .filter(|m| !m.reached_limit())
            .filter_map(|m| m.enter_world_box(bound).filter(|&t| t <= m.world_limit()))
            .min_by(f64::total_cmp)
    }

    /// The members' four-box tests, lanes past a member's limit dropped: entered when
    /// any member enters, keyed by the nearest member key.
    fn enter_world_boxes(&self, boxes: &Aabb4) -> WideEntries {
        let mut combined = WideEntries {
            mask: 0,
            keys: Vec4::INFINITY,
        };
        for m in self.members.iter().filter(|m| !m.reached_limit()) {
            let entries = m.enter_world_boxes(boxes);
            let limit = m.world_limit();
            for lane in 0..4 {
                let key = entries.keys[lane];
                if entries.mask & (1 << lane) != 0 && f64::from(key) <= limit {
                    combined.mask |= 1 << lane;
                    combined.keys[lane] = combined.keys[lane].min(key);
                }
            }
        }
        combined
    }

    fn enter_drawable(&self, local: &Vec<AnyLocal>, bound: &BoundingBox) -> bool {
        self.members
            .iter()
            .zip(local)
            .any(|(m, l)| !m.reached_limit() && m.enter_drawable(l, bound))
    }

    fn intersect(
        &mut self,
        local: &Vec<AnyLocal>,
        context: &DrawableContext<'_>,
        drawable: &dyn Drawable,
    ) {
        // The bounds of the drawable are needed again per member.
        let bound = context
            .scene
            .drawable_bound(context.drawable)
            .unwrap_or_default();
        for (m, l) in self.members.iter_mut().zip(local) {
            if !m.reached_limit() && m.enter_drawable(l, &bound) {
                m.intersect(l, context, drawable);
            }
        }
    }

    fn reached_limit(&self) -> bool {
        !self.members.is_empty() && self.members.iter().all(|m| m.reached_limit())
    }

    /// When every member's does (each member's test is asked again per visit anyway).
    fn drawable_test_only_culls(&self) -> bool {
        self.members.iter().all(|m| m.drawable_test_only_culls())
    }

    /// When any member's can.
    fn hits_points_or_lines(&self) -> bool {
        self.members.iter().any(|m| m.hits_points_or_lines())
    }

    /// When any member orders them.
    fn orders_world_boxes(&self) -> bool {
        self.members.iter().any(|m| m.orders_world_boxes())
    }

    /// Each member walks the world tree in turn (each walk numbers the instances it
    /// meets afresh), when all of them can; otherwise the visitor visits every instance
    /// whole for the group.
    fn intersect_index(&mut self, context: &mut IndexContext<'_>) -> bool {
        if !self.members.iter().all(|m| m.walks_world(context)) {
            return false;
        }
        for m in &mut self.members {
            let walked = m.intersect_index(context);
            debug_assert!(walked, "checked by walks_world");
        }
        true
    }

    fn end(&mut self) {
        self.members.iter_mut().for_each(|m| m.end());
    }
}
